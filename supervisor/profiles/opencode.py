"""OpenCode (npm opencode-ai): read off its screen and given its context by typing; its
pattern file says the rest."""

from .base import Profile

PROFILE = Profile("opencode")

"""Session contexts: what an agent that lost its memory needs to carry on.

rounds      a session's next context round: what is new in its log and transcript →
            digest → summary → the contexts table (and the prompt given back)
digest      the session squeezed into a token budget: the request, the salient middle,
            the latest activity
lastround   a session's last round: the recorder's lock on it, waited for by the
            commands that need it; whether a round covers what the session showed
keeper      the context keeper: makes contexts in the recorder process, on a thread of
            its own, while the session runs (secrets are masked first: ../redact.py)
summarizer  the dispatcher: asks the session's backend for the context, validates it,
            asks once more if malformed, falls back to the heuristic with the reason
backends/   who fills it: the Anthropic API (api), an agent CLI headless on the user's
            own login (its profile's `summary`), and which one `auto` picks (choose)
schema      the context's fields, their validation (plain text only) and the prompt
pricing     what a summary cost
"""

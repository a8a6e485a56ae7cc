"""Session contexts: what an agent that lost its memory needs to carry on.

    rounds      a session's next context round: what is new in its log and transcript →
                digest → summary → the contexts table (and the prompt given back)
    digest      the session squeezed into a token budget: the request, the salient middle,
                the latest activity
    redact      secrets masked before anything leaves the machine
    summarizer  the cheap model fills the context through a tool call; a heuristic if not
    schema      the context's fields, their validation (plain text only) and the prompt
    pricing     what a summary cost
"""

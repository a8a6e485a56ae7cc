"""Reading the agent's screen: pattern files, safe regexes, the detector, user turns, usage limits, following an agent's transcript."""

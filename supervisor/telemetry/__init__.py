"""Telemetry: each session's metrics and events, over OTLP, to the team's observability stack.

signals.py names them, export.py sends them, sdk.py sets up the OpenTelemetry SDK (an
optional extra). Off unless an endpoint is set."""

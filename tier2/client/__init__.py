"""The command line's side of a running service: its REST client (`api`), the SSE follower (`sse`), the progress
display shared with ``tier2 generate`` (`display`) and the service commands (`commands`)."""

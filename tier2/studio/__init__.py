"""Studio: the browser UI at ``/studio`` — plain HTML/JS/CSS files (``static/``) served as they are, no build step,
no CDN. The pages talk to the ``/v1`` API with the user's API key like any other client; this package only serves
the files, under a strict Content-Security-Policy (`tier2.studio.router`)."""

from tier2.studio.router import STUDIO_CSP, studio_router

__all__ = ["STUDIO_CSP", "studio_router"]

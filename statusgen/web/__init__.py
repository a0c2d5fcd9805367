"""Serving and publishing the tree: the preview server, the nginx configuration, publishing."""

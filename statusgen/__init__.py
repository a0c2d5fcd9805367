"""statusgen: a static-site generator for a public service-status monitor.

Data flows one way: config -> probes + vendor fetch -> store -> decisions ->
render -> tree. See README.md and docs/ for the whole picture.
"""

__version__ = "0.2.0"

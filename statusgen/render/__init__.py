"""Render: the tree of files from the store, written and swapped in; each room serves one reader.

build      one build of the whole tree (gather, then every file, then the swap)
gather     what a build needs of the whole site, read from the store in one place
service    one service's files: its record, its histories, its pages
reports    the monthly reports: their JSON, CSV and pages
keys       every file's key, from a declared tuple of its inputs
tree       the generation written, its gzip copies, the swap
templating the Jinja environment every page, feed and badge is made with
words      how numbers, times and codes read in a language (the templates' filters)
markdown   the operator's Markdown as sanitized HTML

api/       the JSON API (``/api/v1``): its documents, their shapes, the OpenAPI document
formats/   other tools' formats: Statuspage v2, Prometheus, iCalendar, Atom, badges
pages/     the web pages, their charts and the cache of their drawn parts

Within render, imports go one way: the shared modules (gather, tree, keys, templating, words,
markdown) import no room; ``api/`` imports only them; ``formats/`` also ``api/``; ``pages/``
also ``formats/``; build, service and reports put the rooms together.
"""

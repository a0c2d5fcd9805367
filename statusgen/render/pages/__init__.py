"""The web pages, for people (and the embed, for other sites' pages).

views      each page: a template and the JSON documents it shows
charts     the geometry of the charts drawn from histories
fragments  the one cache: the parts of pages drawn from histories, kept between builds
"""

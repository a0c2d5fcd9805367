"""The templates and static files of the site: package data, shipped inside the wheel as
``statusgen.templates`` (see pyproject.toml) and read by ``statusgen.render.templating``."""

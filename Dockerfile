# statusgen's container image: `statusgen run --loop` as a non-root user, the store and the tree
# in volumes, a health check that reads the site's own health document. docs/install.md says how
# to run it (alone, with compose.yaml beside nginx, as a Kubernetes CronJob).
#
#   docker build -t statusgen .                     # statusgen from this source, its dependencies from the index
#   python3 -m pip wheel --wheel-dir wheels . && docker build --build-arg WHEELS=wheels -t statusgen .
#                                                   # from those wheels alone: no network, the same every time
#
# BASE is the image it is made on: Debian bookworm with Python 3.11 (python3 and python3-venv).
# Any such image will do, e.g. one made from Debian's own packages with
#   mmdebstrap --variant=minbase --include=python3,python3-venv bookworm base.tar && podman import base.tar
ARG BASE=docker.io/library/python:3.11-slim-bookworm

FROM ${BASE} AS build
# WHEELS: a folder of the build context holding statusgen's wheel and every wheel it needs.
ARG WHEELS=
COPY . /src
RUN python3 -m venv /opt/statusgen \
    && if [ -n "$WHEELS" ]; then \
        /opt/statusgen/bin/pip install --no-cache-dir --no-compile --no-index --find-links "/src/$WHEELS" statusgen; \
    else \
        /opt/statusgen/bin/pip install --no-cache-dir --no-compile /src; \
    fi \
    # The running image installs nothing: pip and setuptools stay behind (some 15 MB).
    && /opt/statusgen/bin/python -m pip uninstall --yes --quiet pip setuptools \
    && /opt/statusgen/bin/statusgen --version

FROM ${BASE}
COPY --from=build /opt/statusgen /opt/statusgen
# A user of its own, written into the files directly: a minimal Debian has no useradd. The store
# and the tree are its; the configuration is mounted read-only at /etc/statusgen/services.toml.
RUN echo 'statusgen:x:10001:10001:statusgen:/var/lib/statusgen:/usr/sbin/nologin' >> /etc/passwd \
    && echo 'statusgen:x:10001:' >> /etc/group \
    && mkdir -p /etc/statusgen /var/lib/statusgen /srv/statusgen \
    && chown statusgen:statusgen /var/lib/statusgen /srv/statusgen
ENV PATH=/opt/statusgen/bin:$PATH \
    STATUSGEN_CONFIG=/etc/statusgen/services.toml \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
USER statusgen
WORKDIR /var/lib/statusgen
# The store (services.toml: store = "/var/lib/statusgen/statusgen.db") and the tree (output =
# "/srv/statusgen/site"): the tree's folder holds the link nginx serves and its generations.
VOLUME ["/var/lib/statusgen", "/srv/statusgen"]
# Healthy while the site's health document is fresh: a run finished within three intervals.
HEALTHCHECK --interval=30s --timeout=20s --start-period=10m --retries=3 CMD ["statusgen", "health"]
# SIGTERM ends the loop within seconds (docs/operations.md); exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["statusgen"]
CMD ["run", "--loop"]

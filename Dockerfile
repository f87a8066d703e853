# perfcast service image: built on debian:12, run on debian:12-slim with only
# the runtime libraries, as a non-root user. Configuration through the
# environment (DATABASE_URL, PERFCAST_*; see `perfcast serve --help`);
# docker-compose.yml runs it next to PostgreSQL.
FROM debian:12 AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential pkg-config libgsl-dev libjansson-dev libmatheval-dev libmicrohttpd-dev libpq-dev libssl-dev \
      libyajl-dev libsqlite3-dev zlib1g-dev libarchive-dev libexpat1-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make -j"$(nproc)" BUILD=/out /out/perfcast

FROM debian:12-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libgsl27 libgslcblas0 libjansson4 libmatheval1 libmicrohttpd12 libpq5 libssl3 libyajl2 libsqlite3-0 zlib1g libarchive13 libexpat1 \
      curl ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin perfcast
COPY --from=build /out/perfcast /usr/local/bin/perfcast
# the dashboard's static files, found there by default (PERFCAST_WEB_DIR)
COPY web /usr/share/perfcast/web
USER perfcast
ENV PERFCAST_LISTEN=0.0.0.0:8080
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8080/health >/dev/null || exit 1
ENTRYPOINT ["perfcast"]
CMD ["serve"]

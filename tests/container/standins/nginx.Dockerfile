# Stand-in for the compose file's nginx image where no registry can be reached: Debian's own
# nginx on the project's base (tests/container builds it under the compose file's tag).
# Like the official image: the http block includes /etc/nginx/conf.d/*.conf, where compose
# mounts deploy/nginx.conf; nginx runs in the foreground.
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${BASE_IMAGE}
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx-light >/dev/null \
 && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/* \
 && ln -sf /dev/stdout /var/log/nginx/access.log && ln -sf /dev/stderr /var/log/nginx/error.log
EXPOSE 80
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]

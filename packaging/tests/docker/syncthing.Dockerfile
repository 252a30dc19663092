# A local stand-in for the official syncthing/syncthing image (nothing can be pulled where the tests run), built by
# packaging/tests/docker/run FROM scratch out of files on the machine: the Syncthing binary (2.x when
# VAULTSYNC_SYNCTHING_2 names one, else the machine's 1.x) and the libraries ldd lists with it (libc; 2.x built with
# the system SQLite also libsqlite3 and libm) at the same paths, and a static busybox for the HEALTHCHECK. Laid out
# like the official image: HOME and STHOMEDIR under /var/syncthing (config, keys and 2.x's database in
# /var/syncthing/config), GUI on 0.0.0.0:8384, uid:gid 1000:1000 (its default PUID:PGID), health from a HEALTHCHECK.
# The context is a directory with rootfs/ in it.
FROM scratch
COPY rootfs/ /
# The official image asks /rest/noauth/health, which Syncthing has only since 1.22.1 (1.19 answers it 403): run passes
# that for 2.x, and "/" for 1.x (the GUI page needs no key and no CSRF token in every version, no GUI password here).
ARG HEALTH_PATH=/
ENV HOME=/var/syncthing \
    STHOMEDIR=/var/syncthing/config \
    STGUIADDRESS=0.0.0.0:8384 \
    STNOUPGRADE=1 \
    VSN_LAB_HEALTH_PATH=${HEALTH_PATH} \
    PATH=/bin
USER 1000:1000
WORKDIR /var/syncthing
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/bin/busybox", "sh", "-c", "exec /bin/busybox wget -q -O /dev/null \"http://127.0.0.1:8384$VSN_LAB_HEALTH_PATH\""]
# --home as well as STHOMEDIR: Syncthing 1.19 reads only the flag. 2.x takes the same flags (the official image's
# entrypoint is `syncthing serve --home /var/syncthing/config`).
ENTRYPOINT ["/bin/syncthing", "serve", "--home=/var/syncthing/config", "--no-browser", "--no-restart"]

# A local stand-in for the official syncthing/syncthing image (nothing can be pulled where the tests run), built by
# packaging/tests/docker/run FROM scratch out of files on the machine: the Syncthing binary and the libc it links
# (ldd), and a static busybox for the HEALTHCHECK. Laid out like the official image: HOME and STHOMEDIR under
# /var/syncthing (config in /var/syncthing/config), GUI on 0.0.0.0:8384, uid:gid 1000:1000, health from
# a HEALTHCHECK. The context is a directory with rootfs/ in it.
FROM scratch
COPY rootfs/ /
ENV HOME=/var/syncthing \
    STHOMEDIR=/var/syncthing/config \
    STGUIADDRESS=0.0.0.0:8384 \
    STNOUPGRADE=1 \
    PATH=/bin
USER 1000:1000
WORKDIR /var/syncthing
# The official image asks /rest/noauth/health, which Syncthing has only since 1.22.1 (1.19 answers it 403). The GUI
# page itself needs no key and no CSRF token in every version (no GUI password here), so the check asks for that.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/bin/busybox", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8384/"]
# --home as well as STHOMEDIR: Syncthing 1.19 reads only the flag.
ENTRYPOINT ["/bin/syncthing", "serve", "--home=/var/syncthing/config", "--no-browser", "--no-restart"]

# The kind node base: Debian's systemd, containerd and runc plus kind's own
# node files (entrypoint, containerd config, kubelet units), which the build
# copies from the sigs.k8s.io/kind module into kind/ in the build context.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG PAUSE_IMAGE
ENV container=docker
RUN set -eux; \
    apt-get update; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      systemd containerd runc containernetworking-plugins \
      conntrack iptables nftables iproute2 ethtool socat util-linux mount kmod \
      libseccomp2 pigz e2fsprogs bash ca-certificates curl jq procps; \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/*.log /var/cache/debconf/*-old
# After the packages, so kind's files replace theirs (containerd's config).
COPY kind/ /
COPY files/ /
RUN set -eux; \
    find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete; \
    rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
      /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
      /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*; \
    echo "ReadKMsg=no" >> /etc/systemd/journald.conf; \
    ln -sf /usr/lib/systemd/systemd /sbin/init; \
    ln -sf /usr/bin/containerd /usr/local/bin/containerd; \
    mkdir -p /opt/cni/bin; \
    for plugin in /usr/lib/cni/*; do ln -sf "$plugin" /opt/cni/bin/; done; \
    ctr oci spec \
      | jq '.hooks.createContainer[.hooks.createContainer|length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \
      | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json; \
    sed -i "s#sandbox_image = .*#sandbox_image = \"${PAUSE_IMAGE}\"#" /etc/containerd/config.toml; \
    grep -q "sandbox_image = \"${PAUSE_IMAGE}\"" /etc/containerd/config.toml; \
    # Lowering a process's oom_score_adj needs CAP_SYS_RESOURCE, which some
    # hosts cannot grant the node: keep pods at or above containerd's own.
    sed -i "s/restrict_oom_score_adj = false/restrict_oom_score_adj = true/" /etc/containerd/config.toml; \
    grep -q "restrict_oom_score_adj = true" /etc/containerd/config.toml; \
    systemctl enable kubelet.service containerd.service undo-mount-hacks.service; \
    systemctl mask systemd-binfmt.service; \
    mkdir -p /etc/kubernetes/manifests
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]

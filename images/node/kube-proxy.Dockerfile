# kube-proxy with the iptables tools it runs; iptables-wrapper picks the
# legacy or nft variant the node already uses on first call.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
RUN set -eux; \
    apt-get update; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends iptables nftables conntrack ipset kmod; \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/*.log /var/cache/debconf/*-old
COPY iptables-wrapper /usr/sbin/iptables-wrapper
RUN set -eux; \
    for tool in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do \
      ln -sf /usr/sbin/iptables-wrapper "/usr/sbin/$tool"; \
    done
COPY kube-proxy /usr/local/bin/kube-proxy
ENTRYPOINT ["/usr/local/bin/kube-proxy"]

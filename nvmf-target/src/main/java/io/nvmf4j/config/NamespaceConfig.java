package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.List;

/** A namespace: its nsid, the block device behind it, and its stable identifiers. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class NamespaceConfig {
    public int nsid;
    public String bdev;
    /** 32 hex digits; generated once when absent. */
    public String nguid;
    /** RFC 4122 UUID; generated once when absent. */
    public String uuid;
    /** 16 hex digits; optional. */
    public String eui64;
    /**
     * The host NQNs that see this namespace (per-host masking); absent: every host the subsystem admits. Given (even
     * empty) when the namespace is added, the namespace is masked: inactive for every host not listed (the spdk
     * engine's no_auto_visible). Hosts are added and removed one by one on a masked namespace only.
     */
    public List<String> hosts;
    /**
     * Its ANA group (ANAGRPID, 1..128); absent: group 1. A listener's {@code anaStates} give each group's state through
     * that listener; the group is fixed while the namespace exists.
     */
    public Integer anaGroup;

    /** The ANA group, 1 when none was given. */
    public int anaGroupOrDefault() {
        return anaGroup == null ? 1 : anaGroup;
    }

    public NamespaceConfig() {
    }

    public NamespaceConfig(int nsid, String bdev) {
        this.nsid = nsid;
        this.bdev = bdev;
    }
}

package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.List;

/** A namespace: its nsid, the block device behind it, and its stable identifiers. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class NamespaceConfig {
    @Range(min = 0, max = 1024)
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
    @Range(min = 1, max = io.nvmf4j.nvme.AnaLog.GROUPS_MAX)
    public Integer anaGroup;
    /**
     * Where its persistent reservation lives, and so whether it is advertised: {@value #RESERVATIONS_SHARED} (in the
     * rbd image, one state for every target that exports it), {@value #RESERVATIONS_LOCAL} (this instance's own; right
     * only when no other instance exports the namespace) or {@value #RESERVATIONS_OFF} (none: Identify clears RESCAP
     * and, when no namespace of the subsystem has any, ONCS bit 5; the reservation commands are Invalid Opcode).
     * Absent: see {@link #reservationsOrDefault}.
     */
    public String reservations;
    /**
     * Its QoS ({@link QosConfig}): its own limits and limits per host; absent: none. Changed live through the API's
     * qos calls.
     */
    public QosConfig qos;

    public static final String RESERVATIONS_SHARED = "shared";
    public static final String RESERVATIONS_LOCAL = "local";
    public static final String RESERVATIONS_OFF = "off";
    /** The values of {@link #reservations}. */
    public static final List<String> RESERVATIONS = List.of(RESERVATIONS_SHARED, RESERVATIONS_LOCAL, RESERVATIONS_OFF);

    /**
     * {@link #reservations}, or when absent: {@code shared} on an rbd bdev (or an error bdev over one); {@code off} in
     * a subsystem whose cntlid range is narrowed (several instances export it, each with its own range, and this one
     * has no state they share); else {@code local}. An engine that keeps one mode only (the spdk engine keeps SPDK's own
     * reservation: {@code local}) uses that one.
     */
    public String reservationsOrDefault(TargetConfig c, SubsystemConfig s) {
        if (reservations != null) {
            return reservations;
        }
        String only = EngineCapabilities.forDocument(c).onlyReservationMode();
        if (only != null) {
            return only;
        }
        if (sharesState(c, bdev)) {
            return RESERVATIONS_SHARED;
        }
        return s.minCntlid != 1 || s.maxCntlid != SubsystemConfig.MAX_CNTLID ? RESERVATIONS_OFF : RESERVATIONS_LOCAL;
    }

    /** Whether bdev {@code name} is an rbd image, directly or under an error bdev: a state every target can read. */
    public static boolean sharesState(TargetConfig c, String name) {
        BdevConfig b = name == null ? null : c.bdev(name);
        if (b != null && "error".equals(b.type)) {
            b = b.base == null ? null : c.bdev(b.base);
        }
        return b != null && "rbd".equals(b.type);
    }

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

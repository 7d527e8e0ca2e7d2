package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.ArrayList;
import java.util.List;

/** An NVM subsystem: identity, namespaces, allowed hosts and the listeners it is reachable on. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class SubsystemConfig {
    public String nqn;
    /** Serial number (SN), at most 20 ASCII characters; generated once when absent. */
    public String serial;
    /** Model number (MN), at most 40 ASCII characters. */
    public String model = "nvmf4j";
    /** Admit any host NQN; otherwise only those in {@link #hosts}. */
    public boolean allowAnyHost;
    public List<String> hosts = new ArrayList<>();
    /** DH-HMAC-CHAP key files per host; a host listed here must authenticate (absent from the JSON when empty). */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public List<HostKeyConfig> hostKeys = new ArrayList<>();
    /**
     * Namespaces it may hold (NN, MNAN), up to {@link #MAX_NAMESPACES}; on the java engine also as many NSIDs as fit
     * in the ANA log page within the transport's MDTS (ConfigValidator#anaLogFits).
     */
    @Range(min = 1, max = MAX_NAMESPACES)
    public int maxNamespaces = 32;
    /**
     * The highest maxNamespaces: both engines keep one slot per NSID for every subsystem (java: a reference; SPDK: a
     * pointer and an ANA group id), so a subsystem declared at this size costs at most 768 KiB before it holds any
     * namespace. The NVMe limit (0xFFFFFFFE) is far above what a host scans.
     */
    public static final int MAX_NAMESPACES = 65535;
    @Range(min = 1, max = MAX_CNTLID)
    public int minCntlid = 1;
    @Range(min = 1, max = MAX_CNTLID)
    public int maxCntlid = MAX_CNTLID;
    /** The highest cntlid of a dynamic controller (0xFFEF). */
    public static final int MAX_CNTLID = 0xFFEF;
    /**
     * QoS per host over all its namespaces ({@link QosConfig#hosts}; a subsystem has no limits of its own: a
     * {@code qosGroups} entry limits namespaces together); absent: none.
     */
    public QosConfig qos;
    public List<NamespaceConfig> namespaces = new ArrayList<>();
    public List<ListenerConfig> listeners = new ArrayList<>();
}

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
    @Range(min = 1, max = 1024)
    public int maxNamespaces = 32;
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

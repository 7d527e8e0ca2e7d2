package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.ArrayList;
import java.util.List;

/**
 * The {@code qos} of a namespace (its own limits, and limits per host) or of a subsystem (limits per host only: each
 * host's I/O to all the subsystem's namespaces shares one budget). See {@link QosLimits}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class QosConfig extends QosLimits {
    /** Limits of one host's I/O (its controllers together); absent: none. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public List<HostQos> hosts = new ArrayList<>();

    /** One host's limits. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class HostQos {
        public String hostNqn;
        public QosLimits limits;

        public HostQos() {
        }

        public HostQos(String hostNqn, QosLimits limits) {
            this.hostNqn = hostNqn;
            this.limits = limits;
        }
    }

    /** The limits of host {@code hostnqn}, or null. */
    public QosLimits host(String hostnqn) {
        if (hosts == null) {
            return null;
        }
        for (HostQos h : hosts) {
            if (h != null && hostnqn.equals(h.hostNqn)) {
                return h.limits;
            }
        }
        return null;
    }

    /** Whether nothing is limited (no limit of its own, no host): such a qos is left out of the document. */
    @JsonIgnore
    public boolean isEmpty() {
        return isUnlimited() && (hosts == null || hosts.isEmpty());
    }
}

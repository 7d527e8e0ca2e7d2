package io.nvmf4j.qos;

import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.QosConfig;
import io.nvmf4j.config.QosGroupConfig;
import io.nvmf4j.config.QosLimits;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The java engine's QoS limiters made from a document: one {@link QosLimiter} per QoS object (a namespace, a host on
 * a namespace, a host on a subsystem, a group), and for each namespace the {@link NamespaceQos} of the limiters its
 * I/O falls under. A limiter whose limits are the same in the next document is kept, budget and all, so changing one
 * limit leaves the others' pacing alone. Called under the engine's monitor.
 */
public final class QosPlan {
    private Map<String, QosLimiter> limiters = new HashMap<>();
    private Map<String, NamespaceQos> namespaces = new HashMap<>();
    private TargetConfig planned;

    /** Plans {@code doc}'s QoS as a whole (nothing to do when it is the document planned last). */
    public void update(TargetConfig doc) {
        if (doc == planned) {
            return;
        }
        Map<String, QosLimiter> next = new HashMap<>();
        Map<String, NamespaceQos> planNs = new HashMap<>();
        long now = System.nanoTime();
        Map<String, QosGroupConfig> groupOf = new HashMap<>();
        for (QosGroupConfig g : doc.qosGroups) {
            g.namespaces.forEach(m -> groupOf.put(m.nqn + "/" + m.nsid, g));
        }
        for (SubsystemConfig s : doc.subsystems) {
            for (NamespaceConfig n : s.namespaces) {
                NamespaceQos q = build(s, n, groupOf.get(s.nqn + "/" + n.nsid), next, now);
                if (q != null) {
                    planNs.put(s.nqn + "/" + n.nsid, q);
                }
            }
        }
        limiters = next;
        namespaces = planNs;
        planned = doc;
    }

    /**
     * Plans the QoS of namespace {@code n} of {@code s}, added to the document planned last to make {@code doc}
     * (its own limiters are made; those of its subsystem's hosts and its group are shared), without planning the
     * whole document again; returns it (null: none).
     */
    public NamespaceQos added(TargetConfig doc, SubsystemConfig s, NamespaceConfig n) {
        if (doc == planned) {
            return of(s.nqn, n.nsid);
        }
        QosGroupConfig group = doc.qosGroups.stream()
            .filter(g -> g.namespaces.stream().anyMatch(m -> m.is(s.nqn, n.nsid))).findFirst().orElse(null);
        NamespaceQos q = build(s, n, group, limiters, System.nanoTime());
        if (q == null) {
            namespaces.remove(s.nqn + "/" + n.nsid);
        } else {
            namespaces.put(s.nqn + "/" + n.nsid, q);
        }
        return q;
    }

    /** The QoS of namespace {@code n} of {@code s} (in {@code group}), its limiters put in {@code next}; null: none. */
    private NamespaceQos build(SubsystemConfig s, NamespaceConfig n, QosGroupConfig group,
                               Map<String, QosLimiter> next, long now) {
        String key = s.nqn + "/" + n.nsid;
        List<QosLimiter> common = new ArrayList<>();
        Map<String, List<QosLimiter>> hosts = new HashMap<>();
        if (s.qos != null) {
            for (QosConfig.HostQos h : s.qos.hosts) {
                host(hosts, h.hostNqn, limiter(next, "host/" + s.nqn + "/" + h.hostNqn, h.limits, now));
            }
        }
        if (n.qos != null) {
            add(common, limiter(next, "ns/" + key, n.qos, now));
            for (QosConfig.HostQos h : n.qos.hosts) {
                host(hosts, h.hostNqn, limiter(next, "nshost/" + key + "/" + h.hostNqn, h.limits, now));
            }
        }
        if (group != null) {
            add(common, limiter(next, "group/" + group.name, group.limits, now));
        }
        if (common.isEmpty() && hosts.isEmpty()) {
            return null;
        }
        NamespaceQos was = namespaces.get(key);
        NamespaceQos q = new NamespaceQos(common, hosts);
        return was != null && was.sameAs(q) ? was : q;
    }

    private static void host(Map<String, List<QosLimiter>> hosts, String hostnqn, QosLimiter l) {
        if (l != null) {
            hosts.computeIfAbsent(hostnqn, x -> new ArrayList<>()).add(l);
        }
    }

    /** The QoS of namespace {@code nsid} of {@code nqn} in the document planned last, or null: none. */
    public NamespaceQos of(String nqn, int nsid) {
        return namespaces.get(nqn + "/" + nsid);
    }

    private static void add(List<QosLimiter> list, QosLimiter l) {
        if (l != null) {
            list.add(l);
        }
    }

    /** The limiter of {@code key} with {@code limits}: the one planned before when its limits are the same. */
    private QosLimiter limiter(Map<String, QosLimiter> next, String key, QosLimits limits, long now) {
        if (limits == null || limits.isUnlimited()) {
            return null;
        }
        QosLimiter made = next.get(key);
        if (made != null) {
            return made; // a subsystem's host or a group: one limiter for all its namespaces
        }
        QosLimiter was = limiters.get(key);
        QosLimiter l = was != null && was.limits().sameLimits(limits) ? was : new QosLimiter(limits, now);
        next.put(key, l);
        return l;
    }
}

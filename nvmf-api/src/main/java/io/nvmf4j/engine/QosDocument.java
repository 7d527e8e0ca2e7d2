package io.nvmf4j.engine;

import io.nvmf4j.ControlException;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.QosConfig;
import io.nvmf4j.config.QosGroupConfig;
import io.nvmf4j.config.QosLimits;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;

/**
 * The QoS part of the document for the control layer: finding a QoS object (not found otherwise), changing one, and
 * keeping the document tidy (a qos with nothing in it is left out; a removed namespace leaves its group).
 */
final class QosDocument {
    private QosDocument() {
    }

    /** Namespace {@code nsid} of subsystem {@code nqn} of {@code c}; not found otherwise. */
    static NamespaceConfig namespace(TargetConfig c, String nqn, int nsid) {
        NamespaceConfig n = ConfigDocument.namespace(ConfigDocument.subsystem(c, nqn), nsid);
        if (n == null) {
            throw ControlException.notFound("no namespace " + nsid + " in " + nqn);
        }
        return n;
    }

    /** The qos of namespace {@code nsid} of {@code nqn}, made when absent. */
    static QosConfig namespaceQos(TargetConfig c, String nqn, int nsid) {
        NamespaceConfig n = namespace(c, nqn, nsid);
        if (n.qos == null) {
            n.qos = new QosConfig();
        }
        return n.qos;
    }

    /** The qos of subsystem {@code nqn}, made when absent. */
    static QosConfig subsystemQos(TargetConfig c, String nqn) {
        SubsystemConfig s = ConfigDocument.subsystem(c, nqn);
        if (s.qos == null) {
            s.qos = new QosConfig();
        }
        return s.qos;
    }

    /** Sets (adds or replaces) the limits of {@code hostnqn} in {@code q}. */
    static void putHost(QosConfig q, String hostnqn, QosLimits limits) {
        q.hosts.removeIf(h -> hostnqn.equals(h.hostNqn));
        q.hosts.add(new QosConfig.HostQos(hostnqn, limits == null ? null : limits.limits()));
    }

    /** Not found unless {@code q} (null: none) has limits for {@code hostnqn}. */
    static void checkHost(QosConfig q, String hostnqn, String where) {
        if (q == null || q.host(hostnqn) == null) {
            throw ControlException.notFound("host " + hostnqn + " has no QoS limits on " + where);
        }
    }

    /** Takes the limits of {@code hostnqn} out of {@code q}. */
    static void removeHost(QosConfig q, String hostnqn) {
        q.hosts.removeIf(h -> hostnqn.equals(h.hostNqn));
    }

    /** Group {@code name} of {@code c}; not found otherwise. */
    static QosGroupConfig group(TargetConfig c, String name) {
        QosGroupConfig g = c.qosGroup(name);
        if (g == null) {
            throw ControlException.notFound("no QoS group " + name);
        }
        return g;
    }

    /** Takes namespace {@code nsid} of {@code nqn} (every namespace of it: nsid 0) out of the groups of {@code c}. */
    /** Whether a QoS group names subsystem {@code nqn}'s namespace {@code nsid} (0: any of its namespaces). */
    static boolean inGroups(TargetConfig c, String nqn, int nsid) {
        for (QosGroupConfig g : c.qosGroups) {
            for (var m : g.namespaces) {
                if (m != null && nqn.equals(m.nqn) && (nsid == 0 || m.nsid == nsid)) {
                    return true;
                }
            }
        }
        return false;
    }

    static void leaveGroups(TargetConfig c, String nqn, int nsid) {
        for (QosGroupConfig g : c.qosGroups) {
            g.namespaces.removeIf(m -> m != null && nqn.equals(m.nqn) && (nsid == 0 || m.nsid == nsid));
        }
    }

    /** Leaves out the qos objects with nothing in them (no limit, no host). */
    static void tidy(TargetConfig c) {
        for (SubsystemConfig s : c.subsystems) {
            if (s.qos != null && s.qos.isEmpty()) {
                s.qos = null;
            }
            for (NamespaceConfig n : s.namespaces) {
                if (n.qos != null && n.qos.isEmpty()) {
                    n.qos = null;
                }
            }
        }
    }

    /** Copies every QoS setting of {@code from} into {@code to} (the objects both have; groups as a whole). */
    static void copyQos(TargetConfig from, TargetConfig to) {
        for (SubsystemConfig s : to.subsystems) {
            SubsystemConfig f = from.subsystems.stream().filter(x -> s.nqn.equals(x.nqn)).findFirst().orElse(null);
            s.qos = f == null ? null : f.qos;
            for (NamespaceConfig n : s.namespaces) {
                NamespaceConfig fn = f == null ? null : ConfigDocument.namespace(f, n.nsid);
                n.qos = fn == null ? null : fn.qos;
            }
        }
        to.qosGroups = from.qosGroups == null ? null : new java.util.ArrayList<>(from.qosGroups);
    }
}

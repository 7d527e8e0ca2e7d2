package io.nvmf4j.config;

import io.nvmf4j.config.EngineCapabilities.Feature;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The rules of QoS, part of {@link ConfigValidator}: each limit inside its declared range ({@link QosLimits}), what
 * the engine can limit ({@link Feature#QOS_NAMESPACE}, {@link Feature#QOS_PER_HOST}, {@link Feature#QOS_GROUPS}) and
 * its IOPS step, a host named once per qos, a subsystem's qos with hosts only, and each group naming existing
 * namespaces, each once, none in two groups.
 */
public final class QosRules {
    private QosRules() {
    }

    static void validate(TargetConfig c, EngineCapabilities engine, List<String> p) {
        Set<String> namespaces = new HashSet<>();
        if (c.subsystems != null) {
            for (int i = 0; i < c.subsystems.size(); i++) {
                SubsystemConfig s = c.subsystems.get(i);
                if (s == null) {
                    continue;
                }
                String at = "subsystems[" + i + "]";
                if (s.qos != null) {
                    for (String f : QosLimits.FIELDS) {
                        Ranges.check(p, at + ".qos", s.qos, f);
                    }
                    if (!s.qos.isUnlimited()) {
                        p.add(at + ".qos: a subsystem's qos limits hosts only (qos.hosts); limit its namespaces "
                            + "together with a qosGroups entry");
                    }
                    hosts(c, engine, s.qos, at + ".qos", p);
                }
                if (s.namespaces == null) {
                    continue;
                }
                for (int j = 0; j < s.namespaces.size(); j++) {
                    NamespaceConfig n = s.namespaces.get(j);
                    if (n == null) {
                        continue;
                    }
                    namespaces.add(s.nqn + "/" + n.nsid);
                    if (n.qos != null) {
                        String qat = at + ".namespaces[" + j + "].qos";
                        limits(engine, n.qos, qat, Feature.QOS_NAMESPACE, p);
                        hosts(c, engine, n.qos, qat, p);
                    }
                }
            }
        }
        groups(c, engine, namespaces, p);
    }

    /**
     * Each limit of {@code q} at {@code at} inside its range, and (when any is set) {@code feature} and the IOPS step
     * of the engine.
     */
    public static void limits(EngineCapabilities engine, QosLimits q, String at, Feature feature, List<String> p) {
        int before = p.size();
        for (String f : QosLimits.FIELDS) {
            Ranges.check(p, at, q, f);
        }
        if (p.size() > before || q.isUnlimited()) {
            return;
        }
        if (!engine.has(feature)) {
            p.add(at + ": " + engine.refusal(feature));
        } else if (!engine.has(Feature.QOS_IOPS_ANY) && QosLimits.value(q.iops) % QosLimits.SPDK_IOPS_STEP != 0) {
            p.add(at + ".iops: " + engine.refusal(Feature.QOS_IOPS_ANY, q.iops));
        }
    }

    private static void hosts(TargetConfig c, EngineCapabilities engine, QosConfig q, String at, List<String> p) {
        if (q.hosts == null) {
            p.add(at + ".hosts: must be a list (may be empty)");
            return;
        }
        Set<String> seen = new HashSet<>();
        for (int k = 0; k < q.hosts.size(); k++) {
            QosConfig.HostQos h = q.hosts.get(k);
            String hat = at + ".hosts[" + k + "]";
            if (h == null) {
                p.add(hat + ": null entry");
                continue;
            }
            if (h.hostNqn == null) {
                p.add(hat + ".hostNqn: missing");
            } else if (!ConfigValidator.nqnProblem(c, h.hostNqn, hat + ".hostNqn", p) && !seen.add(h.hostNqn)) {
                p.add(hat + ".hostNqn: host " + h.hostNqn + " is named twice");
            }
            if (h.limits == null) {
                p.add(hat + ".limits: missing");
            } else {
                limits(engine, h.limits, hat + ".limits", Feature.QOS_PER_HOST, p);
            }
        }
    }

    private static void groups(TargetConfig c, EngineCapabilities engine, Set<String> namespaces, List<String> p) {
        if (c.qosGroups == null) {
            p.add("qosGroups: must be a list (may be empty)");
            return;
        }
        Set<String> names = new HashSet<>();
        Map<String, String> grouped = new HashMap<>();
        for (int i = 0; i < c.qosGroups.size(); i++) {
            QosGroupConfig g = c.qosGroups.get(i);
            String at = "qosGroups[" + i + "]";
            if (g == null) {
                p.add(at + ": null entry");
                continue;
            }
            String bad = PoolRules.nameProblem(g.name, at + ".name");
            if (bad != null) {
                p.add(bad);
            } else if (!names.add(g.name)) {
                p.add(at + ".name: group " + g.name + " is named twice");
            }
            if (g.limits == null) {
                p.add(at + ".limits: missing");
            } else {
                limits(engine, g.limits, at + ".limits", Feature.QOS_GROUPS, p);
            }
            if (g.namespaces == null) {
                p.add(at + ".namespaces: must be a list (may be empty)");
                continue;
            }
            for (int j = 0; j < g.namespaces.size(); j++) {
                QosGroupConfig.Member m = g.namespaces.get(j);
                String mat = at + ".namespaces[" + j + "]";
                if (m == null) {
                    p.add(mat + ": null entry");
                    continue;
                }
                String key = m.nqn + "/" + m.nsid;
                if (!namespaces.contains(key)) {
                    p.add(mat + ": no namespace " + m.nsid + " in subsystem " + m.nqn);
                    continue;
                }
                String was = grouped.putIfAbsent(key, g.name);
                if (was != null) {
                    p.add(mat + ": namespace " + m.nsid + " of " + m.nqn + (was.equals(g.name) ? " is named twice in"
                        + " group " + g.name : " is in group " + was + " already (a namespace is in one group at"
                        + " most)"));
                }
            }
        }
    }
}

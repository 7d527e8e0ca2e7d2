package io.nvmf4j.config;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ConfigValidator#validateChange} against {@link ConfigValidator#validate}: for changes of one subsystem or one
 * bdev of a valid document, drawn at random from the ways a change can break a rule that ties items together, the
 * scoped check refuses exactly what the whole check refuses, with the same problems.
 */
class ValidateChangeTest {
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-000000000001";

    private static TargetConfig document() {
        TargetConfig c = new TargetConfig();
        for (int i = 0; i < 60; i++) {
            c.bdevs.add(new BdevConfig("b" + i, "null", 512, 2048));
        }
        for (int s = 0; s < 10; s++) {
            SubsystemConfig sc = new SubsystemConfig();
            sc.nqn = "nqn.2026-12.io.nvmf4j.v:s" + s;
            for (int n = 0; n < 5; n++) {
                sc.namespaces.add(new NamespaceConfig(n + 1, "b" + (s * 5 + n)));
            }
            ListenerConfig l = new ListenerConfig("tcp", "127.0.0.1", 4420 + s % 3);
            l.secureChannel = s % 3 == 2 ? ListenerConfig.SECURE_OPTIONAL : null;
            sc.listeners.add(l);
            c.subsystems.add(sc);
        }
        ConfigStore.assignIdentities(c);
        ConfigValidator.validate(c);
        return c;
    }

    /** One way to change a copy of a subsystem, given the document it is in. */
    private static List<Consumer<SubsystemConfig>> mutations(TargetConfig c, Random r) {
        return List.of(
            s -> s.namespaces.add(new NamespaceConfig(9, "b" + (50 + r.nextInt(10)))),      // a free bdev: fine
            s -> s.namespaces.add(new NamespaceConfig(9, "b" + r.nextInt(50))),             // a bdev in use
            s -> s.namespaces.add(new NamespaceConfig(9, "nothing")),                       // no such bdev
            s -> ns(s, 0).nguid = c.subsystems.get(r.nextInt(10)).namespaces.get(1).nguid,
            s -> ns(s, 1).uuid = c.subsystems.get(r.nextInt(10)).namespaces.get(2).uuid,
            s -> ns(s, 2).eui64 = "00112233445566" + String.format("%02x", r.nextInt(4)),
            s -> s.nqn = c.subsystems.get(r.nextInt(10)).nqn,                                // an NQN taken (or its own)
            s -> s.nqn = "not an nqn",
            s -> s.hosts.add(HOST),
            s -> s.hosts.add("bad host"),
            s -> ns(s, 3).nsid = ns(s, 4).nsid,
            s -> s.listeners.get(0).secureChannel = r.nextBoolean() ? ListenerConfig.SECURE_OPTIONAL : null,
            s -> s.listeners.add(new ListenerConfig("tcp", "127.0.0.1", 4420 + r.nextInt(3))),
            s -> s.namespaces.clear(),
            s -> s.model = "",
            s -> ns(s, 0).qos = qos(r.nextBoolean() ? -1L : 5_000L),                        // QoS limits, bad or fine
            s -> s.qos = subsystemQos(r.nextBoolean() ? "bad host" : HOST));

    }

    private static QosConfig qos(long iops) {
        QosConfig q = new QosConfig();
        q.iops = iops;
        return q;
    }

    private static QosConfig subsystemQos(String host) {
        QosConfig q = new QosConfig();
        q.hosts.add(new QosConfig.HostQos(host, new QosLimits(1_000L, null, null, null)));
        return q;
    }

    /** Namespace {@code i} of {@code s}; a throwaway one when a mutation before emptied the list. */
    private static NamespaceConfig ns(SubsystemConfig s, int i) {
        return i < s.namespaces.size() ? s.namespaces.get(i) : new NamespaceConfig(1, "b0");
    }

    private static String verdict(Runnable check) {
        try {
            check.run();
            return "accepted";
        } catch (ConfigException e) {
            return e.getMessage();
        }
    }

    @Test
    void aChangedOrAddedSubsystemIsRefusedExactlyWhenTheWholeDocumentIs() {
        TargetConfig base = document();
        Random r = new Random(36);
        int refused = 0;
        for (int round = 0; round < 400; round++) {
            boolean add = r.nextBoolean();
            int at = add ? base.subsystems.size() : r.nextInt(base.subsystems.size());
            SubsystemConfig old = add ? null : base.subsystems.get(at);
            SubsystemConfig s = ConfigStore.parse(ConfigStore.toJson(base)).subsystems.get(add ? 0 : at);
            if (add) {
                s.nqn = "nqn.2026-12.io.nvmf4j.v:new";
                s.namespaces.forEach(n -> { n.nguid = null; n.uuid = null; n.bdev = "b" + (54 + n.nsid); });
            }
            List<Consumer<SubsystemConfig>> ms = mutations(base, r);
            for (int k = 1 + r.nextInt(2); k > 0; k--) {
                ms.get(r.nextInt(ms.size())).accept(s);
            }
            ConfigStore.assignIdentities(s);
            TargetConfig next = ConfigStore.shallowCopy(base);
            if (add) {
                next.subsystems.add(s);
            } else {
                next.subsystems.set(at, s);
            }
            DocumentIndex index = DocumentIndex.of(base);
            if (old != null) {
                index.removeSubsystem(old);
            }
            String whole = verdict(() -> ConfigValidator.validate(next));
            String scoped = verdict(() -> ConfigValidator.validateChange(next, index, null, -1, s, at));
            assertThat(scoped).as("round %d: %s", round, ConfigStore.mapper().valueToTree(s)).isEqualTo(whole);
            refused += whole.equals("accepted") ? 0 : 1;
        }
        assertThat(refused).as("refusals among 400 changes").isBetween(100, 390);
    }

    @Test
    void anAddedBdevIsRefusedExactlyWhenTheWholeDocumentIs() {
        TargetConfig base = document();
        List<BdevConfig> bdevs = List.of(new BdevConfig("b3", "null", 512, 2048), new BdevConfig("fresh", "null", 512,
            2048), new BdevConfig("-x", "null", 512, 2048), new BdevConfig("odd", "null", 1000, 2048),
            new BdevConfig("huge", "malloc", 4096, Long.MAX_VALUE / 2), new BdevConfig("e", "error", 512, 0));
        for (BdevConfig b : bdevs) {
            TargetConfig next = ConfigStore.shallowCopy(base);
            next.bdevs.add(b);
            DocumentIndex index = DocumentIndex.of(base);
            String whole = verdict(() -> ConfigValidator.validate(next));
            String scoped = verdict(() -> ConfigValidator.validateChange(next, index, b, next.bdevs.size() - 1, null,
                -1));
            assertThat(scoped).as("bdev %s", b.name).isEqualTo(whole);
        }
    }
}

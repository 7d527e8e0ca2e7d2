package io.nvmf4j.config;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The QoS rules of a document, per engine: what each engine can limit, the spdk engine's IOPS step, the ranges. */
class QosRulesTest {
    private static final String NQN = "nqn.2026-11.io.nvmf4j:qos";
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000aa";

    private static TargetConfig doc(String engine) {
        TargetConfig c = new TargetConfig();
        c.engine = engine;
        c.bdevs.add(new BdevConfig("m0", "malloc", 512, 2048));
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = NQN;
        s.namespaces.add(new NamespaceConfig(1, "m0"));
        c.subsystems.add(s);
        return c;
    }

    private static List<String> problems(TargetConfig c) {
        List<String> p = new ArrayList<>();
        QosRules.validate(c, EngineCapabilities.forDocument(c), p);
        return p;
    }

    private static QosConfig qos(Long iops) {
        QosConfig q = new QosConfig();
        q.iops = iops;
        return q;
    }

    @Test
    void theSpdkEngineTakesNamespaceLimitsInItsStepsOnly() {
        TargetConfig c = doc("spdk");
        c.subsystems.get(0).namespaces.get(0).qos = qos(1500L);
        assertThat(problems(c)).containsExactly("subsystems[0].namespaces[0].qos.iops: the spdk engine (SPDK's bdev"
            + " QoS) takes IOPS in multiples of 1000, got 1500");
        c.subsystems.get(0).namespaces.get(0).qos = qos(3000L);
        assertThat(problems(c)).isEmpty();
        TargetConfig j = doc("java");
        j.subsystems.get(0).namespaces.get(0).qos = qos(1500L);
        assertThat(problems(j)).as("the java engine takes any value").isEmpty();
    }

    @Test
    void perHostLimitsAndGroupsAreRefusedOnTheSpdkEngineWithItsReason() {
        TargetConfig c = doc("spdk");
        QosConfig q = new QosConfig();
        q.hosts.add(new QosConfig.HostQos(HOST, new QosLimits(1000L, null, null, null)));
        c.subsystems.get(0).qos = q;
        c.qosGroups.add(new QosGroupConfig("g", new ArrayList<>(List.of(new QosGroupConfig.Member(NQN, 1))),
            new QosLimits(null, 5L, null, null)));
        assertThat(problems(c)).containsExactly(
            "subsystems[0].qos.hosts[0].limits: QoS per host is java engine only: SPDK's bdev QoS limits a bdev's"
                + " I/O whichever host sends it; use engine java",
            "qosGroups[0].limits: QoS groups are java engine only: SPDK's bdev QoS limits each bdev on its own (no"
                + " shared budget across bdevs); use engine java");
        c.engine = "java";
        assertThat(problems(c)).isEmpty();
    }

    @Test
    void aSubsystemHasNoLimitsOfItsOwnAndEachLimitHasItsRange() {
        TargetConfig c = doc("java");
        c.subsystems.get(0).qos = qos(5L);
        QosConfig n = qos(-1L);
        n.writeMBps = QosLimits.MAX_MBPS + 1;
        n.hosts.add(new QosConfig.HostQos(HOST, new QosLimits()));
        n.hosts.add(new QosConfig.HostQos(HOST, null));
        c.subsystems.get(0).namespaces.get(0).qos = n;
        assertThat(problems(c)).containsExactly(
            "subsystems[0].qos: a subsystem's qos limits hosts only (qos.hosts); limit its namespaces together with a"
                + " qosGroups entry",
            "subsystems[0].namespaces[0].qos.iops: must be 0..9223372036854775807 (0: unlimited), got -1",
            "subsystems[0].namespaces[0].qos.writeMBps: must be 0..8796093022207 (MB of 2^20 bytes; 0: unlimited),"
                + " got 8796093022208",
            "subsystems[0].namespaces[0].qos.hosts[1].hostNqn: host " + HOST + " is named twice",
            "subsystems[0].namespaces[0].qos.hosts[1].limits: missing");
    }
}

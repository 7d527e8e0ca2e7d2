package io.nvmf4j.spdk;

import io.nvmf4j.engine.ControllerInfo;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** SPDK's controller list as the spdk engine reads it (no SPDK needed): a host NQN is one field whatever it holds. */
class ControllerListTest {
    private static final String HOSTID = "00112233445566778899aabbccddeeff";

    @Test
    void aHostnqnWithTabsAndNewlinesStaysOneField() {
        String odd = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000d2\t7\n1\tforged";
        String plain = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000d3";
        String text = line(1, odd, "TCP:127.0.0.1:40000", 30000, "1,2") + line(2, plain, "RDMA:10.0.0.2:40002", 0, "");
        List<SpdkEngine.Listed> l = SpdkEngine.parseControllers(text);
        assertThat(l).hasSize(2);
        ControllerInfo a = l.get(0).info();
        assertThat(a.cntlid()).isEqualTo(1);
        assertThat(a.hostnqn()).isEqualTo(odd);
        assertThat(a.address()).isEqualTo("127.0.0.1:40000");
        assertThat(a.kato()).isEqualTo(30000);
        assertThat(a.queues()).extracting(ControllerInfo.Queue::qid).containsExactly(0, 1, 2);
        assertThat(l.get(0).transport()).isEqualTo("tcp");
        assertThat(l.get(1).info().hostnqn()).isEqualTo(plain);
        assertThat(l.get(1).info().queues()).hasSize(1);
        assertThat(l.get(1).transport()).isEqualTo("rdma");
    }

    private static String line(int cntlid, String hostnqn, String trid, int kato, String qids) {
        return cntlid + "\t" + HexFormat.of().formatHex(hostnqn.getBytes(StandardCharsets.UTF_8)) + "\t" + HOSTID
            + "\t" + trid + "\t" + kato + "\t" + qids + "\n";
    }
}

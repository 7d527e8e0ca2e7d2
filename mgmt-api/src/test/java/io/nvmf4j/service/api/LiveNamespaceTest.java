package io.nvmf4j.service.api;

import io.nvmf4j.service.api.Http.Res;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A connected NVMe/TCP host sees a namespace added through the API without reconnecting. */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LiveNamespaceTest {
    private static final int FID_ASYNC_EVENT_CONFIG = 0x0B;
    private static final int AEC_NS_ATTRIBUTE = 1 << 8;
    private static final int LID_CHANGED_NS_LIST = 0x04;

    @TempDir
    Path dir;

    @Test
    void postNamespaceRaisesTheChangedNamespaceAenAndTheHostReadsIt() throws Exception {
        try (TestService t = TestService.start(dir, c -> { });
             NvmeController c = NvmeController.open("127.0.0.1", t.nvmePort, TestService.NQN, TestService.HOSTNQN,
                 30000, 1, TcpHostOptions.DEFAULT)) {
            NvmeHost admin = c.admin();
            assertThat(admin.setFeatures(FID_ASYNC_EVENT_CONFIG, AEC_NS_ATTRIBUTE).ok()).isTrue();
            CompletableFuture<Completion> aer = admin.asyncEventRequest();

            assertThat(t.http.post("/api/v1/bdevs", "{\"name\":\"live\",\"type\":\"malloc\",\"numBlocks\":4096}")
                .status()).isEqualTo(201);
            Res ns = t.http.post("/api/v1/subsystems/" + Http.enc(TestService.NQN) + "/namespaces",
                "{\"bdev\":\"live\"}");
            assertThat(ns.status()).as("%s", ns).isEqualTo(201);
            int nsid = ns.json().get("nsid").asInt();
            assertThat(nsid).isEqualTo(2);

            Completion event = aer.get(10, TimeUnit.SECONDS);
            assertThat(event.ok()).isTrue();
            assertThat(event.dw0() & 0x7).as("event type: notice").isEqualTo(2);
            assertThat((event.dw0() >>> 16) & 0xFF).as("log page").isEqualTo(LID_CHANGED_NS_LIST);
            ByteBuffer log = le(admin.getLogPage(LID_CHANGED_NS_LIST, -1, 0, 4096).data());
            assertThat(log.getInt(0)).isEqualTo(nsid);
            assertThat(log.getInt(4)).isZero();
            ByteBuffer list = le(admin.identify(0x02, 0, 0).data());
            assertThat(list.getInt(0)).isEqualTo(1);
            assertThat(list.getInt(4)).isEqualTo(nsid);
            ByteBuffer id = le(admin.identify(0x00, nsid, 0).data());
            assertThat(id.getLong(0)).as("NSZE").isEqualTo(4096);
            byte[] nguid = new byte[16];
            id.get(104, nguid);
            assertThat(java.util.HexFormat.of().formatHex(nguid)).isEqualTo(ns.json().get("nguid").asText());

            byte[] data = new byte[8192];
            new Random(7).nextBytes(data);
            assertThat(c.io(0).write(nsid, 100, data).ok()).isTrue();
            assertThat(c.io(0).read(nsid, 100, 16).data()).isEqualTo(data);
        }
    }

    private static ByteBuffer le(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }
}

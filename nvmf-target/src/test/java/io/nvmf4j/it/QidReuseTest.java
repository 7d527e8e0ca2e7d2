package io.nvmf4j.it;

import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A host may use a queue id again as soon as it has deleted the queue: over TCP it closes the connection and may
 * connect the same qid on a new one right away, as SPDK's host does when a bdev channel goes and the next one
 * takes the lowest free qid. The target sees the close on the old connection's poll group and the new Connect on
 * another; the Connect must not be refused while the old queue's teardown is still on its way. A qid whose queue
 * is still open stays refused.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class QidReuseTest {
    private static final int ROUNDS = 200;
    private static final int SCT_COMMAND_SPECIFIC = 1;
    private static final int SC_CONNECT_INVALID_PARAMETERS = 0x82;
    private static final int SQE_QID = 42;

    private static TestTarget target;

    @BeforeAll
    static void start() throws Exception {
        target = TestTarget.start();
    }

    @AfterAll
    static void stop() {
        if (target != null) {
            target.close();
        }
    }

    /**
     * Closes I/O queue 1 and at once connects qid 1 of the same controller again, {@value #ROUNDS} times: every
     * Connect succeeds, and the new queue carries I/O; queue 2 works throughout.
     */
    @Test
    void aQidClosedAndConnectedAgainAtOnceIsAcceptedEveryTime() throws Exception {
        byte[] hostid = NvmeController.hostIdFor(TestTarget.HOSTNQN);
        try (LogCapture log = new LogCapture("io.nvmf4j.engine.ControllerLog");
             NvmeController c = target.controller(2, TcpHostOptions.DEFAULT)) {
            TcpHost queue1 = c.io(0).queue();
            try {
                for (int round = 0; round < ROUNDS; round++) {
                    queue1.close();
                    queue1 = TcpHost.connect(TestTarget.ADDRESS, target.port, TcpHostOptions.DEFAULT);
                    Completion r = new NvmeHost(queue1, TestTarget.BLOCK_SIZE).fabricsConnect(1,
                        NvmeController.IO_SQSIZE, c.cntlid(), 0, TestTarget.HOSTNQN, TestTarget.SUBNQN, hostid)
                        .completion();
                    assertThat(r.ok()).as("round %d: Connect of qid 1 right after its queue closed: %s (log: %s)",
                        round, r, log.lines("connect refused")).isTrue();
                    if (round % 50 == 0) {
                        TestTarget.assertWriteReadBack(new NvmeHost(queue1, TestTarget.BLOCK_SIZE), round * 8L,
                            4096, round);
                    }
                }
                TestTarget.assertWriteReadBack(new NvmeHost(queue1, TestTarget.BLOCK_SIZE), 0, 8192, 1);
                TestTarget.assertWriteReadBack(c.io(1), 4096, 8192, 2);
            } finally {
                queue1.close();
            }
            assertThat(log.lines("connect refused")).as("refused Connects").isEmpty();
        }
    }

    /**
     * A second Connect of a qid whose queue is open is refused (Invalid Parameters at the QID), once the
     * re-check finds the first still there; the first goes on working.
     */
    @Test
    void aQidWhoseQueueIsStillOpenIsRefused() throws Exception {
        byte[] hostid = NvmeController.hostIdFor(TestTarget.HOSTNQN);
        try (NvmeController c = target.controller(1, TcpHostOptions.DEFAULT);
             TcpHost second = target.tcp(TcpHostOptions.DEFAULT)) {
            Completion r = new NvmeHost(second, TestTarget.BLOCK_SIZE).fabricsConnect(1, NvmeController.IO_SQSIZE,
                c.cntlid(), 0, TestTarget.HOSTNQN, TestTarget.SUBNQN, hostid).completion();
            TestTarget.assertStatus(r, SCT_COMMAND_SPECIFIC, SC_CONNECT_INVALID_PARAMETERS, true);
            assertThat(r.dw0()).as("IATTR 0 (in the SQE), IPO at QID").isEqualTo(SQE_QID);
            TestTarget.assertWriteReadBack(c.io(0), 0, 4096, 3);
        }
    }
}

package io.nvmf4j.engine;

import java.util.List;

/**
 * A live controller as the control plane lists it.
 *
 * @param hostid  the host identifier (16 bytes, as the host sent it in Connect)
 * @param address the host's address on the admin queue
 * @param kato    keep-alive timeout in milliseconds (0: none)
 * @param queues  the admin queue (qid 0) and then the I/O queues
 */
public record ControllerInfo(int cntlid, String hostnqn, byte[] hostid, String address, int kato, List<Queue> queues) {
    /** One queue of a controller: its qid and the host address it is connected from. */
    public record Queue(int qid, String address) {
    }
}

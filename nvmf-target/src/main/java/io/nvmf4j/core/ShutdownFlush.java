package io.nvmf4j.core;

import io.nvmf4j.bdev.FlushIo;
import io.nvmf4j.nvme.NvmeStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * The flushes of one controller shutdown (CC.SHN): one per namespace, all at once; when the last completes the
 * controller reports CSTS.SHST complete. Runs on the admin queue's thread; asynchronous device completions are
 * handed back to it. A flush that fails is logged (the device also remembers it: later writes and flushes of
 * that namespace fail); the shutdown still completes, as there is no status to report it with.
 */
final class ShutdownFlush {
    private static final Logger LOG = LoggerFactory.getLogger(ShutdownFlush.class);

    private final Controller controller;
    private int pending;

    ShutdownFlush(Controller controller) {
        this.controller = controller;
    }

    void start(List<Namespace> namespaces) {
        pending = 1; // held until every flush is submitted, so a synchronous device cannot finish the round early
        for (Namespace ns : namespaces) {
            int half = ns.tryAcquire();
            if (half >= 0) {
                pending++;
                ns.bdev().flush(new Io(ns, half));
            }
        }
        done();
    }

    private void done() {
        if (--pending == 0) {
            controller.shutdownFlushed(this);
        }
    }

    /** The flush of one namespace's device. */
    private final class Io extends FlushIo {
        private final Namespace ns;
        private final int half;

        Io(Namespace ns, int half) {
            this.ns = ns;
            this.half = half;
        }

        @Override
        public void bdevComplete(int status) {
            ns.release(half);
            if (status != NvmeStatus.SUCCESS) {
                LOG.warn("{}: shutdown flush of namespace {} ({}) failed: {}", controller, ns.nsid(), ns.bdev().name(),
                    NvmeStatus.describe(status));
            }
            done();
        }

        @Override
        public void bdevCompleteAsync(int status) {
            try {
                controller.adminQueue().executor().execute(() -> bdevComplete(status));
            } catch (RejectedExecutionException e) {
                ns.release(half); // the poll group stopped: nobody waits for this shutdown any more
            }
        }
    }
}

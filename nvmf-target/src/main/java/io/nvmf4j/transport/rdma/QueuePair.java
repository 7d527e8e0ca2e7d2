package io.nvmf4j.transport.rdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.nvmf4j.rdma.Errno;
import io.nvmf4j.rdma.HugepageArena;
import io.nvmf4j.rdma.QpCaps;
import io.nvmf4j.rdma.RdmaCm;
import io.nvmf4j.rdma.SendWorkRequests;
import io.nvmf4j.rdma.Verbs;

import java.io.IOException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The verbs side of one {@link RdmaQueue}: an RC QP on the connection's CM id (receiving from the poll
 * group's SRQ, completing on its CQ), preallocated send work requests ({@link #WRS_PER_REQUEST} per
 * request: up to {@link RdmaSgl#MSDBD} READs or WRITEs and the response SEND) and the response slots in a
 * small registered region. Built at connect time on the CM thread; used on the poll-group thread.
 *
 * <p>Posting: work requests are written one after another into the array and posted as one chain. Inside
 * the poll group's pass over its CQ ({@link RdmaPollGroup#gathering()}) the chain grows over the whole pass
 * (every READ, WRITE and response SEND the pass's completions and capsules led to) and is posted at its end:
 * one doorbell per queue pair per pass, as SPDK's RDMA transport does. Outside a pass (a block device that
 * completes later) it is posted at once. The provider copies posted work requests into its send queue, so
 * the array is free again after each post. A post that fails at the end of a pass fails every request whose
 * last work request was not posted through the same path as a failed completion ({@link #failUnposted}).
 */
final class QueuePair implements RdmaQueue.Wire {
    static final int WRS_PER_REQUEST = RdmaSgl.MSDBD + 1;
    /** How long a QP in the error state may take to report LAST_WQE_REACHED before it is destroyed anyway. */
    static final long LAST_WQE_TIMEOUT_MS = 3000;

    final RdmaPollGroup group;
    final RdmaTransport transport;
    final long cmId;
    final long qp;
    final int qpNum;
    final int depth;
    final SendWorkRequests wrs;
    private final HugepageArena responseArena;
    private final long responseMr;
    private final int responseLkey;
    private final boolean inlineResponse;
    RdmaQueue queue;
    /** The listener's connection count this queue pair is in, and under which host; released when destroyed. */
    io.nvmf4j.transport.ConnectionLimits connections;
    java.net.InetAddress host;
    int slot = -1;
    private boolean destroyed;
    private boolean lastWqeReached;
    /** Work requests written from index 0 and not yet posted. */
    private int pending;
    /** In the poll group's list of queue pairs to post at the end of the pass. */
    boolean listed;

    QueuePair(RdmaTransport transport, RdmaPollGroup group, long cmId, int depth) throws IOException {
        this.transport = transport;
        this.group = group;
        this.cmId = cmId;
        this.depth = depth;
        int requests = RdmaQueue.requestCount(depth);
        int sendWr = requests * WRS_PER_REQUEST;
        QpCaps caps = new QpCaps();
        long q = Verbs.createQp(cmId, group.device.pd, group.cqHandle(), group.cqHandle(), group.srqHandle(),
            sendWr, 0, 1, 1, RdmaQueue.CQE_SIZE, false, caps);
        if (q < 0) {
            throw new IOException("rdma_create_qp(send_wr " + sendWr + "): " + Errno.describe((int) q));
        }
        this.qp = q;
        this.qpNum = Verbs.qpNum(q);
        this.inlineResponse = caps.maxInlineData() >= RdmaQueue.CQE_SIZE;
        HugepageArena arena = null;
        SendWorkRequests w = null;
        try {
            arena = HugepageArena.allocate((long) requests * RdmaQueue.CQE_SIZE, false);
            long mr = Verbs.regMr(group.device.pd, arena.address(), arena.size(), Verbs.ACCESS_LOCAL_WRITE);
            if (mr < 0) {
                throw new IOException("ibv_reg_mr of the response slots: " + Errno.describe((int) mr));
            }
            w = new SendWorkRequests(sendWr, 1);
            this.responseMr = mr;
        } catch (IOException | RuntimeException | Error e) {
            if (arena != null) {
                arena.close();
            }
            if (w != null) {
                w.close();
            }
            Verbs.destroyQp(cmId);
            throw e;
        }
        this.responseArena = arena;
        this.responseLkey = Verbs.lkey(responseMr);
        this.wrs = w;
    }

    ByteBuf responses() {
        return Unpooled.wrappedBuffer(responseArena.buffer().duplicate().clear());
    }

    @Override
    public int postReads(RdmaRequest req) {
        RdmaSgl sgl = req.sgl;
        int base = begin(sgl.count);
        long local = group.buffers.address(req.bufferIndex);
        long tag = RdmaPollGroup.tag(RdmaPollGroup.TYPE_READ, slot, req.index);
        for (int i = 0; i < sgl.count; i++) {
            boolean last = i == sgl.count - 1;
            wrs.setRdmaRead(base + i, last ? tag | RdmaPollGroup.LAST : tag, local, sgl.length[i], group.lkey,
                sgl.address[i], sgl.key[i], last ? Verbs.SEND_SIGNALED : 0);
            local += sgl.length[i];
        }
        return end(base, sgl.count);
    }

    @Override
    public int postResponse(RdmaRequest req, int writes) {
        RdmaSgl sgl = req.sgl;
        int base = begin(writes + 1);
        if (writes > 0) {
            long local = group.buffers.address(req.bufferIndex);
            long tag = RdmaPollGroup.tag(RdmaPollGroup.TYPE_WRITE, slot, req.index);
            int left = req.dataLength;
            for (int i = 0; i < writes; i++) {
                int len = Math.min(left, sgl.length[i]);
                wrs.setRdmaWrite(base + i, tag, local, len, group.lkey, sgl.address[i], sgl.key[i], 0);
                local += len;
                left -= len;
            }
        }
        int at = base + writes;
        long tag = RdmaPollGroup.tag(RdmaPollGroup.TYPE_SEND, slot, req.index) | RdmaPollGroup.LAST;
        long addr = responseArena.address() + (long) req.index * RdmaQueue.CQE_SIZE;
        int flags = Verbs.SEND_SIGNALED | (inlineResponse ? Verbs.SEND_INLINE : 0);
        if (sgl.invalidate && transport.sendWithInvalidate(group.device)) {
            wrs.setSendWithInvalidate(at, tag, addr, RdmaQueue.CQE_SIZE, responseLkey, sgl.invalidateKey, flags);
        } else {
            wrs.setSend(at, tag, addr, RdmaQueue.CQE_SIZE, responseLkey, flags);
        }
        return end(base, writes + 1);
    }

    /** Where the next {@code n} work requests go: after those pending (posted first if the array is full). */
    private int begin(int n) {
        if (pending + n > wrs.capacity()) {
            postPending();
        }
        return pending;
    }

    /**
     * {@code n} work requests were written from {@code first}: gathered for the end of the pass, or posted
     * now outside one; returns {@code n}, or the negative errno of a post that failed now.
     */
    private int end(int first, int n) {
        pending = first + n;
        if (group.gathering()) {
            group.postAtEndOfPass(this);
            return n;
        }
        int rc = Verbs.postSend(qp, wrs, 0, pending);
        pending = 0;
        return rc < 0 ? rc : n;
    }

    /** Posts what was gathered (the end of the pass); a failed post fails the requests it left out. */
    void postPending() {
        int n = pending;
        if (n == 0 || destroyed) {
            return;
        }
        pending = 0;
        int rc = Verbs.postSend(qp, wrs, 0, n);
        if (rc < 0) {
            int bad = wrs.badIndex();
            failUnposted(bad < 0 || bad > n ? 0 : bad, n, rc);
        }
    }

    /**
     * Work requests {@code [from, to)} were not posted: each request whose signalled last one is among them
     * gets the failed completion it will never get from the device (its earlier ones, if posted, complete or
     * are flushed when the queue pair closes).
     */
    private void failUnposted(int from, int to, int rc) {
        queue.onWorkRequestError("posting " + (to - from) + " work requests failed: " + Errno.describe(rc));
        for (int i = from; i < to; i++) {
            long wrId = wrs.wrId(i);
            if ((wrId & RdmaPollGroup.LAST) == 0) {
                continue;
            }
            int index = (int) (wrId & 0xFFFFFF);
            long type = wrId >>> 60;
            if (type == RdmaPollGroup.TYPE_READ) {
                queue.onReadComplete(index, true, false);
            } else if (type == RdmaPollGroup.TYPE_SEND) {
                queue.onSendComplete(index, false);
            }
        }
    }

    @Override
    public ByteBuf recvBuffer() {
        return group.recvBuffer();
    }

    @Override
    public ByteBuf capsuleData(int recvIndex) {
        return group.capsuleData(recvIndex);
    }

    @Override
    public int recvOffset(int recvIndex) {
        return group.recvOffset(recvIndex);
    }

    @Override
    public void repostRecv(int recvIndex) {
        group.repostRecv(recvIndex);
    }

    @Override
    public void shutdown() {
        RdmaCm.disconnect(cmId);
        Verbs.qpToError(qp);
        // the device raises LAST_WQE_REACHED (routed by the transport's async-event handler) once the QP
        // holds no receive of the SRQ; a device that does not raise it (soft-RoCE on Linux 6.1 does not: seen in the e2e guest) must not keep
        // the queue pair for ever: after the timeout it is destroyed anyway, as SPDK destroys a defunct qpair
        try {
            group.loop.schedule(this::lastWqeTimeout, LAST_WQE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            queue.onLastWqeReached(); // the poll group is stopping: no event will be handled any more
        }
    }

    /** Last WQE reached (the device's event, routed here on the poll-group thread). */
    void onLastWqeReached() {
        lastWqeReached = true;
        queue.onLastWqeReached();
    }

    private void lastWqeTimeout() {
        if (!lastWqeReached && !destroyed) {
            transport.lastWqeTimedOut(group.device, LAST_WQE_TIMEOUT_MS);
            queue.onLastWqeReached();
        }
    }

    @Override
    public void destroy() {
        if (destroyed) {
            return;
        }
        destroyed = true;
        group.detach(this);
        Verbs.destroyQp(cmId);
        Verbs.deregMr(responseMr);
        responseArena.close();
        wrs.close();
        group.unreserve(depth);
        transport.queueDestroyed(this);
    }
}

package io.nvmf4j.spdk;

import io.nvmf4j.engine.ControllerLog;

import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Logs the spdk engine's controllers coming and going the way the java engine does ({@link ControllerLog}), from
 * SPDK's controller lists read every {@link SpdkEngine#CONTROLLER_POLL_MS} ms: SPDK creates and frees its
 * controllers on its own threads and tells no one. A controller that lives shorter than one poll is not seen.
 */
final class ControllerWatch {
    /** A live controller as one poll saw it ({@code host}: ip:port of its admin queue). */
    record Live(String subnqn, int cntlid, String hostnqn, String host, String transport, int katoMs, int ioQueues) {
        String key() {
            return subnqn + ' ' + cntlid + ' ' + hostnqn + ' ' + host;
        }
    }

    private static final class Seen {
        final Live first;
        final long sinceNanos;
        int ioQueues;

        Seen(Live first, long sinceNanos) {
            this.first = first;
            this.sinceNanos = sinceNanos;
            this.ioQueues = first.ioQueues();
        }
    }

    private final Map<String, Seen> seen = new LinkedHashMap<>();

    /** One poll's controllers: logs the new ones as connected and those no longer listed as disconnected. */
    synchronized void poll(List<Live> now, long nanos) {
        Set<String> live = new HashSet<>();
        for (Live l : now) {
            String key = l.key();
            live.add(key);
            Seen s = seen.get(key);
            if (s == null) {
                seen.put(key, new Seen(l, nanos));
                ControllerLog.connected(l.subnqn(), l.cntlid(), l.hostnqn(), l.host(), l.transport(), l.katoMs(), 0);
            } else {
                s.ioQueues = Math.max(s.ioQueues, l.ioQueues());
            }
        }
        for (Iterator<Map.Entry<String, Seen>> it = seen.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Seen> e = it.next();
            if (!live.contains(e.getKey())) {
                it.remove();
                disconnected(e.getValue(), nanos, "gone from SPDK's controller list");
            }
        }
    }

    /** The most I/O queues the polls have seen on controller {@code cntlid} of {@code subnqn}; -1: not seen. */
    synchronized int ioQueuesSeen(String subnqn, int cntlid) {
        return seen.values().stream().filter(s -> s.first.subnqn().equals(subnqn) && s.first.cntlid() == cntlid)
            .mapToInt(s -> s.ioQueues).max().orElse(-1);
    }

    /** The target stops: every controller still seen is logged as disconnected for {@code reason}. */
    synchronized void closeAll(String reason, long nanos) {
        seen.values().forEach(s -> disconnected(s, nanos, reason));
        seen.clear();
    }

    private static void disconnected(Seen s, long nanos, String reason) {
        Live l = s.first;
        ControllerLog.disconnected(l.subnqn(), l.cntlid(), l.hostnqn(), l.host(), l.transport(), s.ioQueues,
            TimeUnit.NANOSECONDS.toSeconds(nanos - s.sinceNanos), reason);
    }
}

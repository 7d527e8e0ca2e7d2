package io.nvmf4j.transport.rdma;

/**
 * The queue pairs ({@code T}) of a poll group by QP number, for receive completions (a shared receive queue's
 * completion names its queue pair only by {@code qp_num}): open addressing with linear probing in a
 * power-of-two table kept at most half full, so a lookup is a hash and a probe or two whatever the
 * number of queue pairs, and allocates nothing. Owned by the poll group's thread.
 */
final class QpTable<T> {
    private int[] keys = new int[16];
    private Object[] values = new Object[16];
    private int size;

    private static int slot(int qpNum, int mask) {
        int h = qpNum * 0x9E3779B9; // QP numbers are often sequential: spread them
        return (h ^ (h >>> 16)) & mask;
    }

    @SuppressWarnings("unchecked")
    T get(int qpNum) {
        int mask = values.length - 1;
        for (int i = slot(qpNum, mask); ; i = (i + 1) & mask) {
            Object qp = values[i];
            if (qp == null || keys[i] == qpNum) {
                return (T) qp;
            }
        }
    }

    /** Maps {@code qpNum} to {@code qp} (replacing what it mapped to). */
    void put(int qpNum, T qp) {
        if (2 * (size + 1) > values.length) {
            int[] oldKeys = keys;
            Object[] old = values;
            keys = new int[old.length * 2];
            values = new Object[old.length * 2];
            size = 0;
            for (int i = 0; i < old.length; i++) {
                if (old[i] != null) {
                    insert(oldKeys[i], old[i]);
                }
            }
        }
        insert(qpNum, qp);
    }

    private void insert(int qpNum, Object qp) {
        int mask = values.length - 1;
        int i = slot(qpNum, mask);
        while (values[i] != null && keys[i] != qpNum) {
            i = (i + 1) & mask;
        }
        if (values[i] == null) {
            size++;
        }
        keys[i] = qpNum;
        values[i] = qp;
    }

    /** Removes the entry of {@code qpNum} if it maps to {@code qp} (backward-shift deletion keeps probes short). */
    void remove(int qpNum, T qp) {
        int mask = values.length - 1;
        int i = slot(qpNum, mask);
        while (values[i] != null && keys[i] != qpNum) {
            i = (i + 1) & mask;
        }
        if (values[i] == null || values[i] != qp) {
            return;
        }
        values[i] = null;
        size--;
        for (int j = (i + 1) & mask; values[j] != null; j = (j + 1) & mask) {
            int home = slot(keys[j], mask);
            // move j into the hole at i unless its home lies cyclically in (i, j]
            if (((j - home) & mask) >= ((j - i) & mask)) {
                keys[i] = keys[j];
                values[i] = values[j];
                values[j] = null;
                i = j;
            }
        }
    }

    int size() {
        return size;
    }
}

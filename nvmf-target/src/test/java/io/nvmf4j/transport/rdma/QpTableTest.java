package io.nvmf4j.transport.rdma;

import io.nvmf4j.fuzz.Tries;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The QP-number table answers like a HashMap through any sequence of attaches and detaches: 300 sequences from a
 * fixed base seed (CI replays exactly these), then 300 from a fresh one (printed).
 */
class QpTableTest {
    private static final int MAX_OPS = 400;
    private static final int MAX_OP = 300;
    private static final int MAX_BASE = 0x7FFF;

    /**
     * Each op: a QP number (small range: collisions and reuse) and whether it is attached or detached; QP numbers
     * start at {@code base}.
     */
    record Ops(List<Integer> ops, int base) {
        /** Any length up to {@link #MAX_OPS}, the empty and the longest sequence and the extreme bases now and then. */
        static Ops generate(SplittableRandom r) {
            int n = r.nextInt(8) == 0 ? (r.nextBoolean() ? 0 : MAX_OPS) : r.nextInt(MAX_OPS + 1);
            List<Integer> ops = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                ops.add(r.nextInt(8) == 0 ? (r.nextBoolean() ? 0 : MAX_OP) : r.nextInt(MAX_OP + 1));
            }
            int base = r.nextInt(8) == 0 ? (r.nextBoolean() ? 0 : MAX_BASE) : r.nextInt(MAX_BASE + 1);
            return new Ops(ops, base);
        }
    }

    @Test
    void behavesLikeAMap() {
        Tries.of("behavesLikeAMap", 4791, 300).forAll(Ops::generate, QpTableTest::check);
    }

    @Test
    void behavesLikeAMapFromAFreshSeed() {
        long seed = System.nanoTime();
        System.out.println("QpTableTest: fresh seed " + seed);
        Tries.of("behavesLikeAMap (fresh seed)", seed, 300).forAll(Ops::generate, QpTableTest::check);
    }

    private static void check(Ops in) {
        QpTable<String> table = new QpTable<>();
        Map<Integer, String> model = new HashMap<>();
        int n = 0;
        for (int op : in.ops()) {
            int qpNum = in.base() + op / 2;
            if (op % 2 == 0) {
                String qp = "qp" + qpNum + "#" + n++;
                table.put(qpNum, qp);
                model.put(qpNum, qp);
            } else {
                String current = model.get(qpNum);
                table.remove(qpNum, "not-" + current); // another object of that number: no effect
                if (current != null) {
                    table.remove(qpNum, current);
                    model.remove(qpNum);
                }
            }
            assertThat(table.size()).isEqualTo(model.size());
        }
        for (int q = in.base(); q <= in.base() + MAX_OP / 2; q++) {
            assertThat(table.get(q)).as("qp_num %d", q).isEqualTo(model.get(q));
        }
    }
}

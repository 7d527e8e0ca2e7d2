package io.nvmf4j.transport.rdma;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The QP-number table answers like a HashMap through any sequence of attaches and detaches. */
class QpTableTest {
    /** Each op: a QP number (small range: collisions and reuse) and whether it is attached or detached. */
    @Property(tries = 300)
    void behavesLikeAMap(@ForAll @Size(max = 400) List<@IntRange(min = 0, max = 300) Integer> ops,
                         @ForAll @IntRange(min = 0, max = 0x7FFF) int base) {
        QpTable<String> table = new QpTable<>();
        Map<Integer, String> model = new HashMap<>();
        int n = 0;
        for (int op : ops) {
            int qpNum = base + op / 2;
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
        for (int q = base; q <= base + 150; q++) {
            assertThat(table.get(q)).as("qp_num %d", q).isEqualTo(model.get(q));
        }
    }
}

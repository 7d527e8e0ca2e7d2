package io.nvmf4j.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * A tree drawn as nvmetcli's {@code ls} draws it (configshell): {@code o- name [summary]}, each level two
 * columns deeper, a {@code |} below a node whose parent has more children after it.
 */
final class Tree {
    private final String name;
    private final String summary;
    private final List<Tree> children = new ArrayList<>();

    /** @param summary the bracketed part, or null */
    Tree(String name, String summary) {
        this.name = name;
        this.summary = summary;
    }

    /** Adds a child and answers it. */
    Tree add(String childName, String childSummary) {
        Tree t = new Tree(childName, childSummary);
        children.add(t);
        return t;
    }

    void print(PrintWriter out) {
        print(out, "", true);
        out.flush();
    }

    private void print(PrintWriter out, String lead, boolean last) {
        out.println(lead + "o- " + name + (summary == null || summary.isEmpty() ? "" : " [" + summary + "]"));
        String below = lead + (last ? "  " : "| ");
        for (int i = 0; i < children.size(); i++) {
            children.get(i).print(out, below, i == children.size() - 1);
        }
    }
}

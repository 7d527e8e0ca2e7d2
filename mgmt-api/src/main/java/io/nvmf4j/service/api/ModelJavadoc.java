package io.nvmf4j.service.api;

import com.sun.source.doctree.DocCommentTree;
import com.sun.source.doctree.DocTree;
import com.sun.source.doctree.LinkTree;
import com.sun.source.doctree.LiteralTree;
import com.sun.source.doctree.StartElementTree;
import com.sun.source.doctree.TextTree;
import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.DocTrees;
import com.sun.source.util.JavacTask;
import com.sun.source.util.TreePath;
import com.sun.source.util.TreePathScanner;

import javax.lang.model.element.Modifier;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The Javadoc of classes and their instance fields, read from source with the JDK's compiler tree API (parsed
 * only, nothing compiled): {@code "Class"} and {@code "Class.field"} (simple names) → the first paragraph as
 * plain text ({@code {@code x}} and {@code {@link #x}} become {@code x}). The schemas' descriptions.
 */
final class ModelJavadoc {
    private ModelJavadoc() {
    }

    static Map<String, String> read(List<Path> roots) throws IOException {
        List<Path> files = new ArrayList<>();
        for (Path root : roots) {
            try (Stream<Path> s = Files.walk(root)) {
                s.filter(p -> p.toString().endsWith(".java")).forEach(files::add);
            }
        }
        Map<String, String> out = new TreeMap<>();
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        try (StandardJavaFileManager fm = javac.getStandardFileManager(null, null, null)) {
            Iterable<? extends JavaFileObject> units = fm.getJavaFileObjectsFromPaths(files);
            JavacTask task = (JavacTask) javac.getTask(null, fm, null, List.of("-proc:none"), null, units);
            DocTrees docs = DocTrees.instance(task);
            for (CompilationUnitTree unit : task.parse()) {
                new Scanner(docs, out).scan(unit, null);
            }
        }
        return out;
    }

    private static final class Scanner extends TreePathScanner<Void, Void> {
        private final DocTrees docs;
        private final Map<String, String> out;
        private final List<String> classes = new ArrayList<>();

        Scanner(DocTrees docs, Map<String, String> out) {
            this.docs = docs;
            this.out = out;
        }

        @Override
        public Void visitClass(ClassTree c, Void unused) {
            String name = c.getSimpleName().toString();
            put(name, getCurrentPath());
            classes.add(name);
            try {
                return super.visitClass(c, unused);
            } finally {
                classes.remove(classes.size() - 1);
            }
        }

        @Override
        public Void visitVariable(VariableTree v, Void unused) {
            boolean member = getCurrentPath().getParentPath().getLeaf() instanceof ClassTree;
            if (member && !classes.isEmpty() && !v.getModifiers().getFlags().contains(Modifier.STATIC)) {
                put(classes.get(classes.size() - 1) + "." + v.getName(), getCurrentPath());
            }
            return null;
        }

        private void put(String key, TreePath path) {
            DocCommentTree doc = docs.getDocCommentTree(path);
            if (doc == null) {
                return;
            }
            StringBuilder sb = new StringBuilder();
            for (DocTree t : doc.getFullBody()) {
                if (t instanceof StartElementTree e && e.getName().contentEquals("p")) {
                    break; // the first paragraph only
                } else if (t instanceof TextTree text) {
                    sb.append(text.getBody());
                } else if (t instanceof LiteralTree literal) {
                    sb.append(literal.getBody().getBody());
                } else if (t instanceof LinkTree link) {
                    String label = link.getLabel().isEmpty() ? link.getReference().getSignature()
                        : link.getLabel().toString();
                    sb.append(label.startsWith("#") ? label.substring(1) : label.replaceFirst("^.*#", ""));
                } else {
                    sb.append(t);
                }
            }
            String text = sb.toString().replaceAll("\\s+", " ").trim();
            if (!text.isEmpty()) {
                out.put(key, text);
            }
        }
    }
}

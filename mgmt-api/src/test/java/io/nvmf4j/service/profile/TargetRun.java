package io.nvmf4j.service.profile;

import io.nvmf4j.service.Main;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One {@code nvmf4j-target} command run in-process through its picocli parser: exit status, stdout, stderr. */
record TargetRun(int exit, String out, String err) {
    static TargetRun of(String command, String... args) {
        return of(null, command, args);
    }

    /** The command with {@code check} and {@code setup} asking {@code probe} about the engines (null: the machine). */
    static TargetRun of(EngineProbe probe, String command, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new Main(), new CommandLine.IFactory() {
            @Override
            public <K> K create(Class<K> cls) throws Exception {
                K made = CommandLine.defaultFactory().create(cls);
                if (made instanceof ProfileCommands.Check c) {
                    c.opts.probe = probe;
                } else if (made instanceof ProfileCommands.Setup s) {
                    s.opts.probe = probe;
                }
                return made;
            }
        });
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        List<String> all = new ArrayList<>(List.of(command));
        all.addAll(List.of(args));
        int rc = cl.execute(all.toArray(String[]::new));
        return new TargetRun(rc, out.toString(), err.toString());
    }

    /** The names of the checks a {@code check} printed as FAIL, in order. */
    List<String> failed() {
        Matcher m = Pattern.compile("(?m)^FAIL  ([^:]+):").matcher(out);
        List<String> names = new ArrayList<>();
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }
}

package io.nvmf4j.cli;

import picocli.CommandLine;
import picocli.CommandLine.Help;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ScopeType;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Every command's help lists its own options first, then the inherited global ones (API address, token,
 * TLS, --json) under "Global options:", so that a command's few options are not lost among them.
 */
final class GlobalOptionsHelp {
    static final String HEADING = "globalOptionListHeading";
    static final String LIST = "globalOptionList";

    private GlobalOptionsHelp() {
    }

    /** Installs the two sections on {@code cl} and every subcommand under it. */
    static void install(CommandLine cl) {
        Map<String, CommandLine.IHelpSectionRenderer> sections = cl.getHelpSectionMap();
        sections.put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_OPTION_LIST, help -> list(help, false));
        sections.put(HEADING, help -> list(help, true).isEmpty() ? "" : "%nGlobal options (anywhere on the line):%n"
            .formatted());
        sections.put(LIST, help -> list(help, true));
        List<String> keys = new ArrayList<>(cl.getHelpSectionKeys());
        keys.add(keys.indexOf(CommandLine.Model.UsageMessageSpec.SECTION_KEY_OPTION_LIST) + 1, HEADING);
        keys.add(keys.indexOf(HEADING) + 1, LIST);
        cl.setHelpSectionMap(sections);
        cl.setHelpSectionKeys(keys);
    }

    private static String list(Help help, boolean global) {
        List<OptionSpec> options = new ArrayList<>();
        for (OptionSpec o : help.commandSpec().options()) {
            if (!o.hidden() && isGlobal(o) == global) {
                options.add(o);
            }
        }
        return help.optionListExcludingGroups(options, help.createDefaultLayout(),
            Help.createShortOptionArityAndNameComparator(), help.createDefaultParamLabelRenderer());
    }

    /** An option of the root that every command inherits (not -h/-V, which stay with each command). */
    static boolean isGlobal(OptionSpec o) {
        return o.scopeType() == ScopeType.INHERIT && !o.usageHelp() && !o.versionHelp();
    }
}

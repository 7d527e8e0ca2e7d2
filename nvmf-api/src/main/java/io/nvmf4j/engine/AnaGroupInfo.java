package io.nvmf4j.engine;

import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntFunction;

/**
 * One ANA group of a subsystem as seen through one listener, as the API shows it.
 *
 * @param group  the ANA group id (ANAGRPID)
 * @param state  its state through that listener ({@code optimized}, {@code non-optimized}, ...)
 * @param nsids  the namespaces in the group (every host's; a host's ANA log lists only those it sees)
 */
public record AnaGroupInfo(int group, String state, List<Integer> nsids) {
    /**
     * The groups of {@code s} through {@code l}: every group a namespace is in or the listener names a state for, in
     * ascending order, with its live state from {@code stateOf}.
     */
    public static List<AnaGroupInfo> of(SubsystemConfig s, ListenerConfig l, IntFunction<String> stateOf) {
        Map<Integer, List<Integer>> groups = new TreeMap<>();
        for (NamespaceConfig n : s.namespaces) {
            groups.computeIfAbsent(n.anaGroupOrDefault(), g -> new ArrayList<>()).add(n.nsid);
        }
        ListenerConfig configured = ConfigDocument.listener(s, l);
        if (configured.anaStates != null) {
            configured.anaStates.keySet().forEach(g -> groups.computeIfAbsent(Integer.parseInt(g), x -> new ArrayList<>()));
        }
        List<AnaGroupInfo> out = new ArrayList<>();
        groups.forEach((g, nsids) -> out.add(new AnaGroupInfo(g, stateOf.apply(g), List.copyOf(nsids))));
        return out;
    }
}

"""The key map, in one table per screen: bindings, the help screen and the footer are made from it.

A row with ``where="processes"`` is bound by the process table widget itself,
one with ``where="runs"`` by the workspace's runs list, and one with
``where="media"`` by the media pane (``MEDIA_PANE_KEYS``): each answers only
while focused. The table lists them so help and the footer show them, and a
test checks the widgets bind the same keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection


@dataclass(frozen=True)
class Key:
    keys: str  # Textual key names, comma-separated
    action: str
    shown: str  # how the help screen writes the keys
    description: str
    category: str
    hint: str = ""  # the footer's word for it; keys without one stay out of the footer
    where: str = "screen"  # "screen": a screen binding; "processes", "runs": the focused process table's, runs list's


def screen_keys(keys: tuple[Key, ...]) -> tuple[Key, ...]:
    """The rows a screen binds itself."""
    return tuple(key for key in keys if key.where == "screen")


def footer_hints(keys: tuple[Key, ...], skip: Collection[str] = ()) -> list[tuple[str, str]]:
    """(keys as shown, hint) for the footer, in table order: the first written key of each.

    ``skip`` names actions to leave out (a key that does nothing in the view shown).
    """
    return [(key.shown.split()[0], key.hint) for key in keys if key.hint and key.shown and key.action not in skip]


# The help section of the keys a focused widget binds, by ``Key.where``.
WIDGET_SECTIONS = {"processes": "Process table (focused)", "runs": "Runs list (focused)", "nodes": "Node table (focused)", "media": "Media pane (focused)"}

# The media pane's own keys (``widgets.media.MediaPane``), in the run view's and the workspace's tables.
MEDIA_PANE_KEYS: tuple[Key, ...] = (
    Key("left", "scrub('prev')", "←", "Media pane: the previous step that logged the key", "Media", where="media"),
    Key("right", "scrub('next')", "→", "Media pane: the next step that logged the key (the last follows the newest)", "Media", where="media"),
    Key("home", "scrub('first')", "home", "Media pane: the first logged step", "Media", where="media"),
    Key("end", "scrub('last')", "end", "Media pane: the last logged step, following new ones", "Media", where="media"),
    Key("up", "pick(-1)", "↑ ↓", "Media pane: the previous / next media key", "Media", where="media"),
    Key("down", "pick(1)", "", "", "Media", where="media"),
    Key("pageup", "scroll_table(-1)", "pgup pgdn", "Media pane: scroll a table", "Media", where="media"),
    Key("pagedown", "scroll_table(1)", "", "", "Media", where="media"),
)


# Zoom, crosshair and smoothing of the focused chart: the same keys on every screen with charts.
CHART_LOOK_KEYS: tuple[Key, ...] = (
    Key("z", "zoom(0.5)", "z Z", "Focused chart: zoom the x range in / out (the mouse wheel over a chart too; drag to pan)", "Chart view"),
    Key("Z", "zoom(2.0)", "", "", "Chart view"),
    Key("x", "reset_zoom", "x", "Focused chart: show the whole x range again (a zoomed chart stays put until then)", "Chart view"),
    Key("comma", "step(-1)", ", .", "Move the crosshair a column left / right; without one, pan a zoomed chart", "Chart view"),
    Key("full_stop", "step(1)", "", "", "Chart view"),
    Key("v", "toggle_crosshair", "v", "Focused chart: crosshair reading out each series (the pointer places it)", "Chart view"),
    Key("V", "sync_crosshair", "V", "Crosshair on every chart of the same x axis / on one chart", "Chart view"),
    Key("e", "smooth", "e", "Focused chart: smoothing (EMA) off → 0.6 → 0.8 → 0.9 → 0.95 → 0.99", "Chart view"),
    Key("E", "smooth_all", "E", "Next smoothing weight on every chart", "Chart view"),
)


SYMON_KEYS: tuple[Key, ...] = (
    Key("h,question_mark,f1", "help", "h ? F1", "Show this help", "General", hint="help"),
    Key("q,ctrl+c,f10", "quit", "q F10 ctrl+c", "Quit", "General", hint="quit"),
    Key("f2", "settings", "F2", "Settings: each one's value and where it came from; change or reset one (remembered)", "General"),
    Key("p", "toggle_pause", "p", "Pause / resume the display (sampling goes on)", "General", hint="pause"),
    Key("plus,equals_sign", "change_interval(1)", "+", "Sample less often (longer interval)", "General"),
    Key("minus", "change_interval(-1)", "-", "Sample more often (shorter interval)", "General"),
    Key("b", "backends", "b", "Backends: present, absent, failing or hung; why; sweep cost", "General"),
    Key("tab", "cycle_focus(1)", "tab", "Focus processes ↔ charts", "Focus", hint="focus"),
    Key("shift+tab", "cycle_focus(-1)", "shift+tab", "Focus backwards", "Focus"),
    Key("escape", "unfocus", "esc", "Leave the focused pane", "Focus"),
    Key("up,w", "move(0,-1)", "↑ w", "Focus the chart above (or move the process cursor)", "Charts"),
    Key("down,s", "move(0,1)", "↓ s", "Focus the chart below", "Charts"),
    Key("left,a", "move(-1,0)", "← a", "Focus the chart to the left", "Charts"),
    Key("right,d", "move(1,0)", "→ d", "Focus the chart to the right", "Charts"),
    Key("n,pagedown", "page(1)", "n pgdn", "Next page", "Charts", hint="page"),
    Key("N,pageup", "page(-1)", "N pgup", "Previous page", "Charts"),
    Key("home", "page_to(0)", "home", "First page", "Charts"),
    Key("end", "page_to(-1)", "end", "Last page", "Charts"),
    Key("y", "cycle_mode", "y", "Focused chart: line → log Y → heatmap", "Charts", hint="mode"),
    *CHART_LOOK_KEYS,
    Key("slash", "filter_focused", "/", "Filter the focused pane: processes, else charts", "Charts", hint="filter"),
    Key("backslash", "filter_charts", "\\", "Filter charts by title, key or label (regex, else text)", "Charts"),
    Key("ctrl+backslash", "clear_chart_filter", "ctrl+\\", "Clear the chart filter", "Charts"),
    Key("c", "grid(0,1)", "c C", "More / fewer grid columns", "Layout"),
    Key("C", "grid(0,-1)", "", "", "Layout"),
    Key("r", "grid(1,0)", "r R", "More / fewer grid rows", "Layout"),
    Key("R", "grid(-1,0)", "", "", "Layout"),
    Key("left_square_bracket", "toggle_sidebar", "[", "Show / hide the vitals sidebar", "Layout", hint="sidebar"),
    Key("t", "cycle_sort", "t", "Sort processes by CPU or memory (GPU table: memory, SM%, GPU)", "Processes"),
    Key("f6", "choose_sort", "F6", "Sort processes by any column (a chooser)", "Processes", hint="sort"),
    Key("less_than_sign", "sort_column(-1)", "< >", "Sort by the column to the left / right", "Processes"),
    Key("greater_than_sign", "sort_column(1)", "", "", "Processes"),
    Key("T,f5", "toggle_tree", "T F5", "Process tree on / off", "Processes", hint="tree"),
    Key("K", "toggle_kernel_threads", "K", "Show / hide kernel threads (hidden at start, as in htop)", "Processes"),
    Key("k,f9", "kill", "k F9", "Send a signal to the selected process (asks first)", "Processes", hint="kill"),
    Key("f", "filter_processes", "f", "Filter processes by name or PID (the focused table)", "Processes"),
    Key("ctrl+f", "clear_process_filter", "ctrl+f", "Clear the process filter", "Processes"),
    Key("g", "cycle_tables", "g", "Sidebar tables: GPU and host processes → GPU → host", "Processes"),
    Key("c", "toggle_command", "c", "Focused process table: command line → with its path → program name", "Processes", where="processes"),
)


def help_sections(keys: tuple[Key, ...] = SYMON_KEYS) -> list[tuple[str, list[tuple[str, str]]]]:
    """(category, [(keys, description)]) in table order, skipping continuation rows.

    Keys a focused widget binds come last, in a section of their own per widget.
    """
    sections: dict[str, list[tuple[str, str]]] = {}
    widgets: dict[str, list[tuple[str, str]]] = {}
    for key in keys:
        if key.shown:
            where = WIDGET_SECTIONS.get(key.where)
            (widgets.setdefault(where, []) if where else sections.setdefault(key.category, [])).append((key.shown, key.description))
    return list(sections.items()) + list(widgets.items())


RUN_KEYS: tuple[Key, ...] = (
    Key("h,question_mark,f1", "help", "h ? F1", "Show this help", "General", hint="help"),
    Key("q,ctrl+c,f10", "quit", "q F10 ctrl+c", "Quit", "General", hint="quit"),
    Key("f2", "settings", "F2", "Settings: each one's value and where it came from; change or reset one (remembered)", "General"),
    Key("p", "toggle_pause", "p", "Pause / resume the display (reading goes on)", "General", hint="pause"),
    Key("exclamation_mark", "alerts", "!", "Alerts seen this session: run.alert() records, runs that finished, failed or crashed", "General"),
    Key("tab", "cycle_focus(1)", "tab", "Focus overview → metrics → console → system", "Focus", hint="focus"),
    Key("shift+tab", "cycle_focus(-1)", "shift+tab", "Focus backwards", "Focus"),
    Key("escape", "unfocus", "esc", "Leave the focused pane, then back to the workspace", "Focus"),
    Key("1", "toggle_pane('metrics')", "1", "Show / hide the metrics grid", "Panes", hint="metrics"),
    Key("2,right_square_bracket", "toggle_pane('system')", "2 ]", "Show / hide system metrics", "Panes", hint="system"),
    Key("4", "toggle_pane('console')", "4", "Show / hide the console", "Panes", hint="console"),
    Key("left_square_bracket", "toggle_pane('overview')", "[", "Show / hide the run overview", "Panes", hint="overview"),
    Key("3", "toggle_media", "3", "Show / hide the media pane: logged images, histograms and tables by step", "Panes"),
    Key("i", "records", "i", "Records: the run file's records one per line, by kind, searchable, each as JSON", "Panes"),
    Key("up,w", "move(0,-1)", "↑ w", "Focus the chart above (in the focused grid)", "Charts"),
    Key("down,s", "move(0,1)", "↓ s", "Focus the chart below", "Charts"),
    Key("left,a", "move(-1,0)", "← a", "Focus the chart to the left", "Charts"),
    Key("right,d", "move(1,0)", "→ d", "Focus the chart to the right", "Charts"),
    Key("n,pagedown", "page(1)", "n pgdn", "Next page of charts", "Charts"),
    Key("N,pageup", "page(-1)", "N pgup", "Previous page of charts", "Charts"),
    Key("home", "page_to(0)", "home", "First page", "Charts"),
    Key("end", "page_to(-1)", "end", "Last page", "Charts"),
    Key("y", "cycle_mode", "y", "Focused chart: line → log Y → heatmap (→ spread across nodes)", "Charts"),
    *CHART_LOOK_KEYS,
    Key("c", "grid(0,1)", "c C", "More / fewer grid columns", "Charts"),
    Key("C", "grid(0,-1)", "", "", "Charts"),
    Key("r", "grid(1,0)", "r R", "More / fewer grid rows", "Charts"),
    Key("R", "grid(-1,0)", "", "", "Charts"),
    Key("slash", "filter('metrics')", "/", "Filter metrics (the console when it is focused)", "Filters", hint="filter"),
    Key("ctrl+l", "clear_filter('metrics')", "ctrl+l", "Clear the metrics filter", "Filters"),
    Key("backslash", "filter('system')", "\\", "Filter system charts by title, key or label", "Filters"),
    Key("ctrl+backslash", "clear_filter('system')", "ctrl+\\", "Clear the system filter", "Filters"),
    Key("l", "pick_labels", "l", "Pick node labels to show (shared runs)", "Filters", hint="labels"),
    Key("o", "filter('overview')", "o", "Filter the overview", "Filters"),
    Key("ctrl+o", "clear_filter('overview')", "ctrl+o", "Clear the overview filter", "Filters"),
    *MEDIA_PANE_KEYS,
)


WORKSPACE_KEYS: tuple[Key, ...] = (
    Key("h,question_mark,f1", "help", "h ? F1", "Show this help", "General", hint="help"),
    Key("q,ctrl+c,f10", "quit", "q F10 ctrl+c", "Quit", "General", hint="quit"),
    Key("f2", "settings", "F2", "Settings: each one's value and where it came from; change or reset one (remembered)", "General"),
    Key("p", "toggle_pause", "p", "Pause / resume the display (reading goes on)", "General"),
    Key("exclamation_mark", "alerts", "!", "Alerts seen this session: run.alert() records, runs that finished, failed or crashed", "General"),
    Key("escape", "focus_runs", "esc", "Back to the runs list", "General"),
    Key("space", "toggle_run", "space", "Runs list: select / deselect the run under the cursor", "Runs", hint="select", where="runs"),
    Key("enter", "open", "enter", "Runs list: open the run under the cursor", "Runs", hint="open", where="runs"),
    Key("tab,shift+tab", "cycle_focus(1)", "tab", "Focus runs ↔ charts", "Focus", hint="focus"),
    Key("left_square_bracket", "toggle_runs", "[", "Show / hide the runs list", "Runs"),
    Key("right_square_bracket", "toggle_peek", "]", "Show / hide the run under the cursor beside the list: overview, system charts, console", "Runs"),
    Key("3", "toggle_media", "3", "Show / hide the selected runs' images side by side at one step", "Runs"),
    Key("f", "filter('runs')", "f", "Filter runs by name, id, project or group (words), tag:, note:, state:, cfg.KEY>=1e-3, summary.KEY<0.3; -x not, a | b or, ( )", "Runs", hint="filter runs"),
    Key("ctrl+f", "clear_filter('runs')", "ctrl+f", "Clear the run filter", "Runs"),
    Key("P", "pin_run", "P", "Pin / unpin the run under the cursor: ◆, it stays selected", "Runs"),
    Key("A", "select_matching", "A", "Select every run the list shows (the filter's matches)", "Runs"),
    Key("X", "deselect_unpinned", "X", "Deselect every run but the pinned", "Runs"),
    Key("g", "cycle_grouping", "g", "Group runs by W&B group, or list them flat", "Runs", hint="group"),
    Key("j", "cycle_job_type", "j", "Show one job type at a time, then all", "Runs", hint="job type"),
    Key("D", "compare", "D", "Compare the run under the cursor and the selected runs: differing config, each metric's last and best", "Runs"),
    Key("i", "records", "i", "Records of the run under the cursor: one per line, by kind, searchable, each as JSON", "Runs"),
    Key("slash", "filter('metrics')", "/", "Filter metrics", "Charts", hint="filter metrics"),
    Key("ctrl+l", "clear_filter('metrics')", "ctrl+l", "Clear the metrics filter", "Charts"),
    Key("left,a", "move(-1,0)", "← a", "Focus the chart to the left", "Charts"),
    Key("right,d", "move(1,0)", "→ d", "Focus the chart to the right", "Charts"),
    Key("up,w", "move(0,-1)", "↑ w", "Focus the chart above (the runs list moves its cursor)", "Charts"),
    Key("down,s", "move(0,1)", "↓ s", "Focus the chart below", "Charts"),
    Key("n,pagedown", "page(1)", "n pgdn", "Next page of charts", "Charts"),
    Key("N,pageup", "page(-1)", "N pgup", "Previous page", "Charts"),
    Key("home", "page_to(0)", "home", "First page", "Charts"),
    Key("end", "page_to(-1)", "end", "Last page", "Charts"),
    Key("y", "cycle_mode", "y", "Focused chart: line → log Y → heatmap", "Charts"),
    *CHART_LOOK_KEYS,
    Key("c", "grid(0,1)", "c C", "More / fewer grid columns", "Charts"),
    Key("C", "grid(0,-1)", "", "", "Charts"),
    Key("r", "grid(1,0)", "r R", "More / fewer grid rows", "Charts"),
    Key("R", "grid(-1,0)", "", "", "Charts"),
    *MEDIA_PANE_KEYS,
)


# The compare view over the workspace (``screens.compare``): runs as columns, rows of config and metrics.
COMPARE_KEYS: tuple[Key, ...] = (
    Key("h,question_mark,f1", "help", "h ? F1", "Show this help", "General", hint="help"),
    Key("q,ctrl+c,f10", "quit", "q F10 ctrl+c", "Quit", "General", hint="quit"),
    Key("escape", "close", "esc", "Back to the workspace", "General", hint="back"),
    Key("up", "cursor_up", "↑ ↓", "Move the row cursor (pgup pgdn home end too)", "Rows", where="table"),
    Key("down", "cursor_down", "", "", "Rows", where="table"),
    Key("s", "sort(False)", "s", "Sort the runs by the row under the cursor: best first (config: ascending)", "Rows", hint="sort"),
    Key("S", "sort(True)", "S", "Sort the runs by the row under the cursor, reversed", "Rows"),
    Key("slash", "filter", "/", "Filter the rows by name (regex or text)", "Rows", hint="filter"),
    Key("ctrl+l", "clear_filter", "ctrl+l", "Clear the row filter", "Rows"),
)

# The record viewer (``screens.records``, ``i`` in the run view and the workspace): a run file's records.
RECORDS_KEYS: tuple[Key, ...] = (
    Key("h,question_mark,f1", "help", "h ? F1", "Show this help", "General", hint="help"),
    Key("q,ctrl+c,f10", "quit", "q F10 ctrl+c", "Quit", "General", hint="quit"),
    Key("escape", "close", "esc", "Back to the run view or the workspace", "General", hint="back"),
    Key("tab", "cycle_focus", "tab", "Focus the records ↔ the record's JSON (its keys: ↑ ↓ pgup pgdn home end)", "General", hint="focus"),
    Key("up", "cursor(-1)", "↑ ↓", "Records list: the previous / next record", "Records", where="list"),
    Key("down", "cursor(1)", "", "", "Records", where="list"),
    Key("pageup", "page(-1)", "pgup pgdn", "Records list: a page up / down", "Records", where="list"),
    Key("pagedown", "page(1)", "", "", "Records", where="list"),
    Key("home", "jump(0)", "home", "Records list: the first record", "Records", where="list"),
    Key("end", "jump(-1)", "end", "Records list: the last record, following new ones as the file grows", "Records", where="list"),
    Key("k", "cycle_kind(1)", "k K", "List only the next / previous kind of record (the header counts each); after the last, all", "Records", hint="kind"),
    Key("K", "cycle_kind(-1)", "", "", "Records"),
    Key("slash", "search", "/", "Search the records' JSON (regex or text) from the cursor: it moves to the first match", "Search", hint="search"),
    Key("n", "search_next(1)", "n N", "The next / previous match (wrapping around), among the kind listed", "Search", hint="next"),
    Key("N", "search_next(-1)", "", "", "Search"),
    Key("ctrl+l", "clear_search", "ctrl+l", "Clear the search", "Search"),
)

CLUSTER_KEYS: tuple[Key, ...] = (
    Key("h,question_mark,f1", "help", "h ? F1", "Show this help", "General", hint="help"),
    Key("q,ctrl+c,f10", "quit", "q F10 ctrl+c", "Quit", "General", hint="quit"),
    Key("f2", "settings", "F2", "Settings: each one's value and where it came from; change or reset one (remembered)", "General"),
    Key("p", "toggle_pause", "p", "Pause / resume the display (Prometheus is still asked)", "General", hint="pause"),
    Key("tab", "cycle_focus(1)", "tab", "Focus nodes ↔ charts", "Focus", hint="focus"),
    Key("shift+tab", "cycle_focus(-1)", "shift+tab", "Focus backwards", "Focus"),
    Key("escape", "unfocus", "esc", "Leave the focused pane", "Focus"),
    Key("l", "pick_labels", "l", "Pick the nodes the charts and the heatmap show", "Nodes", hint="nodes"),
    Key("enter", "choose", "enter", "Node table: charts and heatmap show only this node (again: every node)", "Nodes", where="nodes"),
    Key("f6", "choose_sort", "F6", "Sort nodes by any column (a chooser)", "Nodes", hint="sort"),
    Key("less_than_sign", "sort_column(-1)", "< >", "Sort nodes by the column to the left / right", "Nodes"),
    Key("greater_than_sign", "sort_column(1)", "", "", "Nodes"),
    Key("t", "cycle_sort", "t", "Sort nodes by name → GPU% → hottest GPU → age → state", "Nodes"),
    Key("f", "filter('nodes')", "f", "Filter the node table by name", "Nodes"),
    Key("ctrl+f", "clear_filter('nodes')", "ctrl+f", "Clear the node table filter", "Nodes"),
    Key("m", "cycle_heat_metric", "m", "Heatmap: GPU utilisation → temperature → memory → power", "Heatmap", hint="heatmap"),
    Key("backslash", "filter('charts')", "\\", "Filter charts by title, key or node", "Charts", hint="filter"),
    Key("ctrl+backslash", "clear_filter('charts')", "ctrl+\\", "Clear the chart filter", "Charts"),
    Key("slash", "filter_focused", "/", "Filter the focused pane: the node table, else the charts", "Charts"),
    Key("up,w", "move(0,-1)", "↑ w", "Focus the chart above (the node table moves its cursor)", "Charts"),
    Key("down,s", "move(0,1)", "↓ s", "Focus the chart below", "Charts"),
    Key("left,a", "move(-1,0)", "← a", "Focus the chart to the left", "Charts"),
    Key("right,d", "move(1,0)", "→ d", "Focus the chart to the right", "Charts"),
    Key("n,pagedown", "page(1)", "n pgdn", "Next page of charts (the node table: of nodes)", "Charts", hint="page"),
    Key("N,pageup", "page(-1)", "N pgup", "Previous page", "Charts"),
    Key("home", "page_to(0)", "home", "First page", "Charts"),
    Key("end", "page_to(-1)", "end", "Last page", "Charts"),
    Key("y", "cycle_mode", "y", "Focused chart: line → log Y → heatmap → spread across nodes", "Charts", hint="mode"),
    *CHART_LOOK_KEYS,
    Key("c", "grid(0,1)", "c C", "More / fewer grid columns", "Layout"),
    Key("C", "grid(0,-1)", "", "", "Layout"),
    Key("r", "grid(1,0)", "r R", "More / fewer grid rows", "Layout"),
    Key("R", "grid(-1,0)", "", "", "Layout"),
    Key("left_square_bracket", "toggle_pane('nodes')", "[", "Show / hide the node table", "Layout", hint="table"),
    Key("right_square_bracket", "toggle_pane('heatmap')", "]", "Show / hide the GPU heatmap", "Layout"),
)

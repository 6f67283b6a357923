"""The key map, in one table: bindings and the help screen are made from it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Key:
    keys: str  # Textual key names, comma-separated
    action: str
    shown: str  # how the help screen writes the keys
    description: str
    category: str


SYMON_KEYS: tuple[Key, ...] = (
    Key("h,question_mark", "help", "h ?", "Show this help", "General"),
    Key("q,ctrl+c", "quit", "q ctrl+c", "Quit", "General"),
    Key("tab", "cycle_focus(1)", "tab", "Focus processes ↔ charts", "Focus"),
    Key("shift+tab", "cycle_focus(-1)", "shift+tab", "Focus backwards", "Focus"),
    Key("escape", "unfocus", "esc", "Leave the focused pane", "Focus"),
    Key("up,w", "move(0,-1)", "↑ w", "Focus the chart above (or move the process cursor)", "Charts"),
    Key("down,s", "move(0,1)", "↓ s", "Focus the chart below", "Charts"),
    Key("left,a", "move(-1,0)", "← a", "Focus the chart to the left", "Charts"),
    Key("right,d", "move(1,0)", "→ d", "Focus the chart to the right", "Charts"),
    Key("n,pagedown", "page(1)", "n pgdn", "Next page", "Charts"),
    Key("N,pageup", "page(-1)", "N pgup", "Previous page", "Charts"),
    Key("home", "page_to(0)", "home", "First page", "Charts"),
    Key("end", "page_to(-1)", "end", "Last page", "Charts"),
    Key("y", "cycle_mode", "y", "Focused chart: line → log Y → heatmap", "Charts"),
    Key("backslash", "filter_charts", "\\", "Filter charts by title, key or label (regex, else text)", "Charts"),
    Key("ctrl+backslash", "clear_chart_filter", "ctrl+\\", "Clear the chart filter", "Charts"),
    Key("c", "grid(0,1)", "c C", "More / fewer grid columns", "Layout"),
    Key("C", "grid(0,-1)", "", "", "Layout"),
    Key("r", "grid(1,0)", "r R", "More / fewer grid rows", "Layout"),
    Key("R", "grid(-1,0)", "", "", "Layout"),
    Key("left_square_bracket", "toggle_sidebar", "[", "Show / hide the vitals sidebar", "Layout"),
    Key("t", "cycle_sort", "t", "Sort processes by CPU or memory (GPU table: memory, SM%, GPU)", "Processes"),
    Key("f", "filter_processes", "f", "Filter processes by name or PID (the focused table)", "Processes"),
    Key("ctrl+f", "clear_process_filter", "ctrl+f", "Clear the process filter", "Processes"),
    Key("g", "cycle_tables", "g", "Sidebar tables: GPU and host processes → GPU → host", "Processes"),
)


def help_sections(keys: tuple[Key, ...] = SYMON_KEYS) -> list[tuple[str, list[tuple[str, str]]]]:
    """(category, [(keys, description)]) in table order, skipping continuation rows."""
    sections: dict[str, list[tuple[str, str]]] = {}
    for key in keys:
        if key.shown:
            sections.setdefault(key.category, []).append((key.shown, key.description))
    return list(sections.items())


RUN_KEYS: tuple[Key, ...] = (
    Key("h,question_mark", "help", "h ?", "Show this help", "General"),
    Key("q,ctrl+c", "quit", "q ctrl+c", "Quit", "General"),
    Key("tab", "cycle_focus(1)", "tab", "Focus overview → metrics → console → system", "Focus"),
    Key("shift+tab", "cycle_focus(-1)", "shift+tab", "Focus backwards", "Focus"),
    Key("escape", "unfocus", "esc", "Leave the focused pane, then back to the workspace", "Focus"),
    Key("1", "toggle_pane('metrics')", "1", "Show / hide the metrics grid", "Panes"),
    Key("2,right_square_bracket", "toggle_pane('system')", "2 ]", "Show / hide system metrics", "Panes"),
    Key("4", "toggle_pane('console')", "4", "Show / hide the console", "Panes"),
    Key("left_square_bracket", "toggle_pane('overview')", "[", "Show / hide the run overview", "Panes"),
    Key("up,w", "move(0,-1)", "↑ w", "Focus the chart above (in the focused grid)", "Charts"),
    Key("down,s", "move(0,1)", "↓ s", "Focus the chart below", "Charts"),
    Key("left,a", "move(-1,0)", "← a", "Focus the chart to the left", "Charts"),
    Key("right,d", "move(1,0)", "→ d", "Focus the chart to the right", "Charts"),
    Key("n,pagedown", "page(1)", "n pgdn", "Next page of charts", "Charts"),
    Key("N,pageup", "page(-1)", "N pgup", "Previous page of charts", "Charts"),
    Key("home", "page_to(0)", "home", "First page", "Charts"),
    Key("end", "page_to(-1)", "end", "Last page", "Charts"),
    Key("y", "cycle_mode", "y", "Focused chart: line → log Y → heatmap (→ spread across nodes)", "Charts"),
    Key("c", "grid(0,1)", "c C", "More / fewer grid columns", "Charts"),
    Key("C", "grid(0,-1)", "", "", "Charts"),
    Key("r", "grid(1,0)", "r R", "More / fewer grid rows", "Charts"),
    Key("R", "grid(-1,0)", "", "", "Charts"),
    Key("slash", "filter('metrics')", "/", "Filter metrics (the console when it is focused)", "Filters"),
    Key("ctrl+l", "clear_filter('metrics')", "ctrl+l", "Clear the metrics filter", "Filters"),
    Key("backslash", "filter('system')", "\\", "Filter system charts by title, key or label", "Filters"),
    Key("ctrl+backslash", "clear_filter('system')", "ctrl+\\", "Clear the system filter", "Filters"),
    Key("l", "pick_labels", "l", "Pick node labels to show (shared runs)", "Filters"),
    Key("o", "filter('overview')", "o", "Filter the overview", "Filters"),
    Key("ctrl+o", "clear_filter('overview')", "ctrl+o", "Clear the overview filter", "Filters"),
)


WORKSPACE_KEYS: tuple[Key, ...] = (
    Key("h,question_mark", "help", "h ?", "Show this help", "General"),
    Key("q,ctrl+c", "quit", "q ctrl+c", "Quit", "General"),
    Key("escape", "focus_runs", "esc", "Back to the runs list", "General"),
    Key("tab,shift+tab", "cycle_focus(1)", "tab", "Focus runs ↔ charts", "Focus"),
    Key("left_square_bracket", "toggle_runs", "[", "Show / hide the runs list", "Runs"),
    Key("f", "filter('runs')", "f", "Filter runs by name, id, project, group or state", "Runs"),
    Key("ctrl+f", "clear_filter('runs')", "ctrl+f", "Clear the run filter", "Runs"),
    Key("g", "cycle_grouping", "g", "Group runs by W&B group, or list them flat", "Runs"),
    Key("j", "cycle_job_type", "j", "Show one job type at a time, then all", "Runs"),
    Key("slash", "filter('metrics')", "/", "Filter metrics", "Charts"),
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
    Key("c", "grid(0,1)", "c C", "More / fewer grid columns", "Charts"),
    Key("C", "grid(0,-1)", "", "", "Charts"),
    Key("r", "grid(1,0)", "r R", "More / fewer grid rows", "Charts"),
    Key("R", "grid(-1,0)", "", "", "Charts"),
)

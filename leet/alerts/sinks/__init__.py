"""Where alerts go: Apprise URLs and local commands, each shown without its secrets.

Apprise URLs go through Apprise (``apprise_sink``); ``webhook`` POSTs
leet's alert JSON (or Slack's ``{"text": …}``) to a plain http(s) URL with
urllib. A command
(``command``) gets the alert as JSON on its stdin, never through a shell.

Credentials stay out of sight (``redact``). ``${NAME}`` in a URL or a
command is read from the environment when the sink is made; ``@PATH`` names
a file of URLs. Every line a sink shows, its ``name`` and its errors, has
``${NAME}`` back for what came from the environment and ``***`` for any
other part of the URL its name does not show. Apprise's log, where it says
why a send failed, is caught per thread (``apprise_log``) and reported only
that way.

This package's face is the names below; ``leet.alerts.delivery`` and
``leet watch`` need no others.
"""

from leet.alerts.sinks.apprise_sink import AppriseSink, sinks_from
from leet.alerts.sinks.command import CommandSink, command_sink
from leet.alerts.sinks.message import message_parts
from leet.alerts.sinks.sink import Sink, SinkError
from leet.alerts.sinks.webhook import webhook

__all__ = ["AppriseSink", "CommandSink", "Sink", "SinkError", "command_sink", "message_parts", "sinks_from", "webhook"]

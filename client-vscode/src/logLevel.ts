// The LSP trace level follows the log level the user picked for the tritonlens output channel
// ("Developer: Set Log Level..."), as Microsoft's Python tool extensions do.
import * as vscode from 'vscode';
import { Trace } from 'vscode-languageserver-protocol';

export function traceFor(level: vscode.LogLevel): Trace {
  switch (level) {
    case vscode.LogLevel.Trace:
      return Trace.Verbose;
    case vscode.LogLevel.Debug:
      return Trace.Messages;
    default:
      return Trace.Off;
  }
}

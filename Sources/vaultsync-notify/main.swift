import FoundationEssentials
import NotifyRuntime

App.main(arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment)

import NotifySimulator

NotifySimulator.Command.main(CommandLine.arguments)

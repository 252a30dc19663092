import NotifyRuntime

App.main(arguments: CommandLine.arguments, environment: App.processEnvironment())

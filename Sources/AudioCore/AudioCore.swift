// AudioCore

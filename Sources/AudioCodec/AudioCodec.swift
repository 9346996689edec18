// AudioCodec

#!/usr/bin/env bash
# Regenerates the demo's speech clips and manifest.json from the lines below, with espeak-ng and sox.
# Run from anywhere: ./Resources/clips/make-clips.sh
# Clips are 16 kHz mono 16-bit WAV (the bots resample to 48 kHz when they load them), trimmed of silence at both
# ends and normalised to -3 dBFS. The output does not change between runs of the same espeak-ng and sox.
set -euo pipefail
cd "$(dirname "$0")"
command -v espeak-ng >/dev/null || { echo "make-clips: espeak-ng is not installed (apt-get install espeak-ng)" >&2; exit 1; }
command -v sox >/dev/null || { echo "make-clips: sox is not installed (apt-get install sox)" >&2; exit 1; }

# file|speaker identity|voice|pitch|words per minute|kind|text
# kind: talk (the stage conversation, in this order), invited (said once on stage after an invitation),
# opening (the moderator's welcome), guest (the moderator greeting a new speaker).
lines=$(cat <<'LINES'
sam-1|sam|en-us+m3|45|175|talk|Happy Friday, everyone. This week I finally moved my whole workflow into tmux.
imogen-1|imogen|en-gb+f3|60|170|talk|Oh, brave. I tried that once, and lost a whole afternoon to my prefix key.
callum-1|callum|en-gb-scotland+m1|35|170|talk|Control A, surely. Anything else is chaos, and I will not be taking questions.
sam-2|sam|en-us+m3|45|175|talk|Control B forever. But the real win was splitting panes for logs and tests.
imogen-2|imogen|en-gb+f3|60|170|talk|My favourite trick this week was piping absolutely everything through fzf.
callum-2|callum|en-gb-scotland+m1|35|170|talk|I rewrote a shell script in Swift, and now it compiles for longer than it runs.
sam-3|sam|en-us+m3|45|175|talk|That is the most honest thing anyone has said in this room.
imogen-3|imogen|en-gb+f3|60|170|talk|Has anyone tried one of the new GPU terminals? Is it worth switching?
callum-3|callum|en-gb-scotland+m1|35|170|talk|It is fast. But my fonts looked so sharp that I missed the blur.
sam-4|sam|en-us+m3|45|175|talk|So, who here still uses a light theme? Be honest.
imogen-4|imogen|en-gb+f3|60|170|talk|Me. Solarized light, in daylight, as nature intended.
callum-4|callum|en-gb-scotland+m1|35|170|talk|Right, let us hear from the room. Hands up if you have a question.
zoe-invited|zoe|en-us+f4|55|175|invited|Hi, thanks for having me up. How do you all keep your dotfiles in sync?
misaki-invited|misaki|en-us+f5|70|170|invited|Hello from Osaka! This room is the best part of my Friday.
ravi-invited|ravi|en-gb-x-gbcwmd+m4|40|175|invited|Hey folks. Hot take: vim keys in every app. Even the calculator.
dara-opening|dara|en-gb-x-rp+f2|50|175|opening|Welcome to Friday terminal hour. Raise your hand any time.
dara-guest|dara|en-gb-x-rp+f2|50|175|guest|Welcome up! You are on stage, go ahead.
LINES
)

rm -f ./*.wav
manifest="[\n"
first=1
while IFS='|' read -r file speaker voice pitch speed kind text; do
    raw=$(mktemp --suffix=.wav)
    espeak-ng -v "$voice" -p "$pitch" -s "$speed" -w "$raw" "$text"
    # Trim leading and trailing silence, take out rumble, normalise.
    sox "$raw" -r 16000 -c 1 -b 16 "$file.wav" \
        silence 1 0.02 0.3% reverse silence 1 0.02 0.3% reverse gain -n -6 highpass 80 gain -n -3
    rm -f "$raw"
    duration=$(soxi -D "$file.wav")
    [ $first = 1 ] || manifest+=",\n"
    first=0
    manifest+="  {\"file\": \"$file.wav\", \"speaker\": \"$speaker\", \"voice\": \"$voice\", \"kind\": \"$kind\", "
    manifest+="\"duration\": $(printf '%.2f' "$duration"), \"text\": \"$text\"}"
done <<< "$lines"
manifest+="\n]\n"
printf "$manifest" > manifest.json
du -ch ./*.wav | tail -1

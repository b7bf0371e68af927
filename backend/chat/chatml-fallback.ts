// Texts used when the model's template cannot do something itself: a ChatML template for
// models without one (Hermes-style tools, as Qwen2.5 writes them), and the tool instructions
// put into the system message for templates that know nothing about tools.

/** ChatML with `<tool_call>` JSON tool calls and `<tool_response>` results (the Hermes/Qwen convention). */
const CHATML_SOURCE = `
{%- if messages and messages[0].role == 'system' %}
    {%- set system_message = messages[0].content %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set system_message = '' %}
    {%- set loop_messages = messages %}
{%- endif %}
{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if system_message %}
        {{- system_message + '\\n\\n' }}
    {%- endif %}
    {{- TOOLS_PROMPT_HEAD }}
    {%- for tool in tools %}
        {{- '\\n' + (tool | tojson) }}
    {%- endfor %}
    {{- TOOLS_PROMPT_TAIL + '<|im_end|>\\n' }}
{%- elif system_message %}
    {{- '<|im_start|>system\\n' + system_message + '<|im_end|>\\n' }}
{%- endif %}
{%- for message in loop_messages %}
    {%- if message.role == 'assistant' and message.tool_calls %}
        {{- '<|im_start|>assistant' }}
        {%- if message.content %}
            {{- '\\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {{- '\\n<tool_call>\\n{"name": "' + tool_call.function.name + '", "arguments": ' }}
            {{- tool_call.function.arguments | tojson }}
            {{- '}\\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == 'tool' %}
        {%- if loop.first or loop.previtem.role != 'tool' %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' }}
        {%- if loop.last or loop.nextitem.role != 'tool' %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- else %}
        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
`;

export const TOOLS_PROMPT_HEAD = '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n'
  + 'You are provided with function signatures within <tools></tools> XML tags:\n<tools>';

export const TOOLS_PROMPT_TAIL = '\n</tools>\n\nFor each function call, return a json object with function name and '
  + 'arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n'
  + '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';

/** The fallback template source, tool texts inlined as Jinja string literals. */
export const CHATML_FALLBACK_TEMPLATE = CHATML_SOURCE
  .replace('TOOLS_PROMPT_HEAD', JSON.stringify(TOOLS_PROMPT_HEAD))
  .replace('TOOLS_PROMPT_TAIL', JSON.stringify(TOOLS_PROMPT_TAIL));

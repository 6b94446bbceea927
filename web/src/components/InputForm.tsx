import { useEffect, useId, useMemo, useState } from 'react';
import type { InputRequestJson } from '../hooks/use-input-request.js';
import { inputAnswer, inputFields, type InputField } from '../state/input-form.js';

/**
 * The answer to an MCP server's question: its question(s), then a field per thing it asks
 * for (or a JSON box when its schema is more than a flat form). `onChange` gets the answer,
 * or the problem that stops it from being sent.
 */
export function InputForm({
  request,
  disabled,
  onChange,
}: {
  request: InputRequestJson;
  disabled: boolean;
  onChange(answer: { answer: Record<string, unknown> } | { problem: string }): void;
}) {
  const fields = useMemo(() => inputFields(request.requested_schema), [request.requested_schema]);
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [json, setJson] = useState('{}');
  // What an untouched form answers: nothing yet, unless the server asks for nothing required.
  // biome-ignore lint/correctness/useExhaustiveDependencies: said once per question, not on every new onChange.
  useEffect(() => {
    onChange(fields ? inputAnswer(fields, {}) : { answer: {} });
  }, [fields]);

  const setValue = (name: string, value: string | boolean) => {
    const next = { ...values, [name]: value };
    setValues(next);
    if (fields) onChange(inputAnswer(fields, next));
  };
  const setJsonText = (text: string) => {
    setJson(text);
    try {
      const value: unknown = JSON.parse(text);
      onChange(
        typeof value === 'object' && value !== null && !Array.isArray(value)
          ? { answer: value as Record<string, unknown> }
          : { problem: 'The answer must be a JSON object.' },
      );
    } catch {
      onChange({ problem: 'The answer is not valid JSON yet.' });
    }
  };

  return (
    <div className="input-request" data-testid="input-request">
      <p className="input-asker">{request.server} asks:</p>
      {request.questions.map((question, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the questions are shown as the server sent them, never reordered.
        <p key={index} className="input-question">
          {question}
        </p>
      ))}
      {fields ? (
        fields.map((field) => <Field key={field.name} field={field} value={values[field.name]} disabled={disabled} onChange={setValue} />)
      ) : (
        <textarea
          className="arguments-editor"
          aria-label="Answer (JSON)"
          spellCheck={false}
          rows={4}
          value={json}
          disabled={disabled}
          onChange={(event) => setJsonText(event.target.value)}
        />
      )}
    </div>
  );
}

function Field({
  field,
  value,
  disabled,
  onChange,
}: {
  field: InputField;
  value: string | boolean | undefined;
  disabled: boolean;
  onChange(name: string, value: string | boolean): void;
}) {
  const id = useId();
  const label = `${field.label}${field.required ? '' : ' (optional)'}`;
  if (field.kind === 'boolean')
    return (
      <label className="input-field input-check">
        <input
          type="checkbox"
          checked={value === true}
          disabled={disabled}
          onChange={(event) => onChange(field.name, event.target.checked)}
        />
        {label}
      </label>
    );
  return (
    <div className="input-field">
      <label htmlFor={id}>{label}</label>
      {field.kind === 'choice' ? (
        <select
          id={id}
          value={typeof value === 'string' ? value : ''}
          disabled={disabled}
          onChange={(event) => onChange(field.name, event.target.value)}
        >
          <option value="">—</option>
          {field.options.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      ) : (
        <input
          id={id}
          type={field.kind === 'text' ? 'text' : 'number'}
          value={typeof value === 'string' ? value : ''}
          disabled={disabled}
          onChange={(event) => onChange(field.name, event.target.value)}
        />
      )}
    </div>
  );
}
